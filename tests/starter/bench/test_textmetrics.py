"""Known small cases for the OCR quality measures."""

from __future__ import annotations

import pytest

from starter.bench.textmetrics import (
    cer,
    levenshtein,
    normalise_ws,
    token_f1,
    tokens,
    word_f1,
    words,
)


def test_normalise_ws_collapses_runs_and_trims() -> None:
    """Newlines, tabs, form feeds and repeated spaces become single spaces, ends trimmed."""
    assert normalise_ws("  a\n\n b\t\fc  ") == "a b c"


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("", "", 0), ("abc", "", 3), ("", "abc", 3), ("kitten", "sitting", 3), ("flaw", "lawn", 2)],
)
def test_levenshtein_known_distances(a: str, b: str, distance: int) -> None:
    """Edit distance matches textbook values, in both argument orders."""
    assert levenshtein(a, b) == distance
    assert levenshtein(b, a) == distance


def test_cer_is_distance_over_reference_length() -> None:
    """One substitution in a ten-character reference is a CER of 0.1."""
    assert cer("abcdefghiX", "abcdefghij") == pytest.approx(0.1)


def test_cer_ignores_whitespace_layout() -> None:
    """Line breaks versus spaces do not count as errors."""
    assert cer("Total\n\n 12.50", "Total 12.50") == 0.0


def test_cer_empty_reference_is_defined() -> None:
    """An empty reference scores 0.0 against nothing and 1.0 against any text."""
    assert cer("", " \n") == 0.0
    assert cer("noise", "") == 1.0


def test_words_lowercase_and_strip_edge_punctuation() -> None:
    """Edge punctuation goes, inner punctuation stays, bare punctuation vanishes."""
    assert words('"Fax:" (614) 466-5087, -- U.S.A.') == ["fax", "614", "466-5087", "u.s.a"]


def test_word_f1_is_order_independent() -> None:
    """The same words in another order score a perfect 1.0."""
    assert word_f1("world hello", "Hello, world!") == 1.0


def test_word_f1_counts_multiplicity() -> None:
    """A repeated word matches only as often as the reference has it."""
    # hyp: the the the cat (4), ref: the cat (2) -> matched 2, P=0.5, R=1.0
    assert word_f1("the the the cat", "the cat") == pytest.approx(2 / 3)


def test_word_f1_empty_sides() -> None:
    """Two empty texts agree; one empty side scores zero."""
    assert word_f1("", "") == 1.0
    assert word_f1("", "text") == 0.0
    assert word_f1("text", "") == 0.0


def test_tokens_split_at_punctuation_as_funsd_truth_does() -> None:
    """Letter-and-digit runs: a phone number and an abbreviation come apart, case folded."""
    found = tokens('"Fax:" (614) 466-5087, -- U.S.A. n_o')
    assert found == ["fax", "614", "466", "5087", "u", "s", "a", "n", "o"]


def test_token_f1_forgives_the_truths_split_but_not_a_misread() -> None:
    """FUNSD's "466- 5087" matches a read "466-5087" in full; word F1 scores it zero."""
    assert word_f1("466-5087", "466- 5087") == 0.0
    assert token_f1("466-5087", "466- 5087") == 1.0
    assert token_f1("466-5O87", "466- 5087") == pytest.approx(0.5)
    assert token_f1("", "") == 1.0 and token_f1("", "text") == 0.0
