"""The page's skew as measured from its words' boxes (``activities.pages.wordbox``)."""

from __future__ import annotations

import pytest

from activities.pages.layout import page_lines
from activities.pages.wordbox import top_edge_slope
from custody.models import PageText, Word


def _word(text: str, x: int, y: int, slope: float, conf: float = 0.99) -> Word:
    w = 20 * len(text)
    drop = round(slope * w)
    return Word(
        text=text,
        confidence=conf,
        box=[[x, y], [x + w, y + drop], [x + w, y + drop + 30], [x, y + 30]],
    )


def _long(word: Word) -> float:
    return 60.0


def test_a_photocopy_whose_boxes_are_mostly_shrunk_level_keeps_its_tilted_words_slope() -> None:
    """23 of 52 long words tilted 0.0325 and the rest level (boxes shrunk to their ink):
    the page's slope is the tilted words', not the median of all (which is 0)."""
    words = [_word("referral", 100, 100 + 40 * n, 0.0325 if n < 23 else 0.0) for n in range(52)]
    assert top_edge_slope(words, _long) == pytest.approx(0.0325, abs=0.003)


def test_a_level_page_with_two_words_an_engine_tilted_stays_level() -> None:
    """Two tilted boxes among forty level ones are noise, not the page's skew."""
    words = [_word("referral", 100, 100 + 40 * n, 0.05 if n < 2 else 0.0) for n in range(40)]
    assert top_edge_slope(words, _long) == 0.0


def test_a_value_at_the_right_margin_of_a_tilted_photocopy_stays_on_its_labels_line() -> None:
    """On a page tilted 1.9 degrees whose short words' boxes came back level, the value
    printed 1300 px right of its label (42 px lower) is on the label's line, not the next."""
    slope, words = 0.0325, []
    for n in range(10):
        y = 100 + 60 * n
        words.append(_word("Referral", 100, round(y + slope * 100), slope))
        words.append(_word("date:", 280, round(y + slope * 280), 0.0))
        words.append(_word(f"0{n}/03/2026", 1400, round(y + slope * 1400), 0.0))
    page = PageText(
        page=0, width=1700, height=2200, text="", words=words, mean_confidence=0.99, seconds=0.0
    )
    lines = page_lines(page)
    assert [line.text for line in lines] == [f"Referral date: 0{n}/03/2026" for n in range(10)]
