"""``bench fields``' ``pairs``: FUNSD links counted as MANIFEST.md counts them, matched once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custody.fields import FormPair
from starter.bench.fields import _report
from starter.bench.fields_score import Tally
from starter.bench.pairs import Link, PairTally, correct, links, links_for

PAIR_KEYS = {"expected", "predicted", "correct", "precision", "recall", "f1"}


def _entity(n: int, label: str, text: str, *linking: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": n,
        "label": label,
        "text": text,
        "box": [0, 0, 1, 1],
        "words": [],
        "linking": [list(x) for x in linking],
    }


def _pair(key: str, value: str) -> FormPair:
    return FormPair(
        key=key, value=value, page=0, key_box=[0] * 4, value_box=[0] * 4, confidence=0.7
    )


ANNOTATION = {
    "form": [
        _entity(0, "question", "DATE:", (0, 1)),
        _entity(1, "answer", "9/ 3/ 92", (0, 1)),  # listed by both ends: one link
        _entity(2, "question", "TO:", (2, 3), (2, 4)),
        _entity(3, "answer", "Mr. G. J. Schramm", (2, 3)),
        _entity(4, "answer", "Mr. W. P. Myhan"),  # listed by the question only
        _entity(5, "question", "Fax:", (5, 6)),
        _entity(6, "answer", "  "),  # an empty answer is no link
        _entity(7, "header", "FAX COVER", (7, 0)),  # header to question: not counted
    ]
}


def test_pairs_links_count_each_question_answer_link_once() -> None:
    """Both directions are one link; empty answers and header links are not links."""
    found = links(ANNOTATION)
    assert found == [
        Link("DATE:", "9/ 3/ 92"),
        Link("TO:", "Mr. G. J. Schramm"),
        Link("TO:", "Mr. W. P. Myhan"),
    ]


def test_pairs_match_on_token_f1_after_lower_casing() -> None:
    """Case and FUNSD's split punctuation do not matter; a missing word under 0.8 does."""
    truth = links(ANNOTATION)
    assert correct([("Date", "9/3/92")], truth) == 1
    assert correct([("to", "MR. G.J. SCHRAMM")], truth) == 1
    assert correct([("TO", "Mr. Schramm")], truth) == 0  # 2 of 4 tokens: F1 0.67
    assert correct([("Fax", "9/3/92")], truth) == 0  # the value fits, the key does not


def test_pairs_match_each_link_at_most_once_whatever_the_order() -> None:
    """Two copies of one pair earn one link; a pair that fits two links leaves the other one's."""
    truth = [Link("Name", "A B"), Link("Name", "A B C")]
    twice = [("Name", "A B"), ("Name", "A B")]
    assert correct(twice, [truth[0]]) == 1
    # "A B C" fits only the second link; "A B" fits both (F1 0.8 against "A B C").
    assert correct([("Name", "A B"), ("Name", "A B C")], truth) == 2
    assert correct([("Name", "A B C"), ("Name", "A B")], truth) == 2


def test_pairs_tally_gives_precision_recall_and_f1() -> None:
    """3 links, 2 pairs, 1 right: precision 0.5, recall 1/3, F1 0.4; none read: no precision."""
    tally = PairTally()
    tally.add(links(ANNOTATION), [_pair("DATE:", "9/3/92"), _pair("TO:", "Mr. R. H. Stinnette")])
    figures = tally.figures()
    assert figures == {
        "expected": 3,
        "predicted": 2,
        "correct": 1,
        "precision": 0.5,
        "recall": 0.3333,
        "f1": 0.4,
    }
    empty = PairTally()
    empty.add(links(ANNOTATION), [])
    assert empty.figures()["precision"] is None and empty.figures()["recall"] == 0.0


def test_pairs_links_for_reads_the_corpus_annotations(corpus: Path) -> None:
    """forms_dev holds 829 links, as its MANIFEST counts; a SROIE receipt has no FUNSD links."""
    scans = sorted((corpus / "forms_dev").glob("funsd_*.png"))
    total = sum(len(links_for(scan) or []) for scan in scans)
    assert total == 829
    assert links_for(corpus / "ocr_gt" / "sroie_022.jpg") is None


def test_bench_fields_report_carries_pairs_at_the_top() -> None:
    """The report's top-level ``pairs`` has exactly the contract's keys."""
    pairs = PairTally(expected=4, predicted=2, correct=2)
    report = _report({"all": Tally()}, 0, 1.0, pairs)
    assert set(report["pairs"]) == PAIR_KEYS
    assert (report["pairs"]["precision"], report["pairs"]["recall"]) == (1.0, 0.5)
