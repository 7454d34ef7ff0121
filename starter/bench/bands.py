"""Confidence bands: per band of word confidence, the share of words that are wrong.

A word an engine reads is *right* when the ground truth has a copy of it not
already claimed (the words of ``starter.bench.textmetrics``: lower case, edge
punctuation stripped), claimed in the engine's reading order; otherwise it
is wrong. This is the order-free word F1's own matching, one word at a
time, so a band's wrong share and the F1 agree on what a hit is. An engine
that reports one confidence per line (RapidOCR) or per phrase (EasyOCR) gives
each word in it that confidence.

From the bands, a floor and a review line are proposed for the OCR check
(``activities.output``, ``CUSTODY_CONFIDENCE_FLOOR`` / ``_REVIEW``): the review
line is the lowest band edge from which no band holds more than
``REVIEW_MAX_WRONG`` wrong words, the floor the lowest from which none holds
more than ``FLOOR_MAX_WRONG``. A document whose mean confidence is below the
floor sits where most words are wrong; above the review line, where at most
one in five is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from starter.bench.textmetrics import words as split_words

EDGES = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0)
FLOOR_MAX_WRONG = 0.5
# Not 0.1: the truth's own noise (FUNSD's split punctuation, approximate transcripts)
# leaves 7-11 % of even the 0.9-1.0 band "wrong" on forms (smoke runs, 2026-11-30).
REVIEW_MAX_WRONG = 0.2
MIN_WORDS = 20  # a band with fewer words says too little to move a line
Scored = tuple[str, float]  # a word or line as the engine read it, and its confidence
Counts = list[list[int]]  # per band: [words, wrong]


def judge(read: Iterable[Scored], truth: str) -> list[tuple[float, bool]]:
    """Each word read, with its confidence and whether the truth holds it (unclaimed)."""
    unclaimed = Counter(split_words(truth))
    judged = []
    for text, confidence in read:
        for word in split_words(text):
            right = unclaimed[word] > 0
            unclaimed[word] -= right
            judged.append((confidence, right))
    return judged


def count(judged: Iterable[tuple[float, bool]]) -> Counts:
    """[words, wrong] per band of ``EDGES``; the top band includes 1.0."""
    counts = [[0, 0] for _ in EDGES[1:]]
    for confidence, right in judged:
        band = next(i for i, hi in enumerate(EDGES[1:]) if confidence < hi or hi == EDGES[-1])
        counts[band][0] += 1
        counts[band][1] += not right
    return counts


def add(a: Counts, b: Counts) -> Counts:
    return [[x[0] + y[0], x[1] + y[1]] for x, y in zip(a, b, strict=True)]


def table(counts: Counts) -> list[dict[str, float | int | str | None]]:
    """One row per band: its edges, its words, its wrong words and their share."""
    return [
        {
            "band": f"{lo:.1f}-{hi:.1f}",
            "lo": lo,
            "hi": hi,
            "words": n,
            "wrong": wrong,
            "wrong_share": round(wrong / n, 4) if n else None,
        }
        for (lo, hi), (n, wrong) in zip(zip(EDGES, EDGES[1:], strict=False), counts, strict=True)
    ]


def lowest_edge(counts: Counts, max_wrong: float) -> float | None:
    """The lowest band edge from which no band of ``MIN_WORDS`` or more exceeds ``max_wrong``."""
    edge = None
    for lo, (n, wrong) in reversed(list(zip(EDGES, counts, strict=False))):
        if n >= MIN_WORDS and wrong / n > max_wrong:
            break
        edge = lo
    return edge


def propose(counts: Counts) -> dict[str, float | None]:
    return {
        "floor": lowest_edge(counts, FLOOR_MAX_WRONG),
        "review": lowest_edge(counts, REVIEW_MAX_WRONG),
        "floor_max_wrong_share": FLOOR_MAX_WRONG,
        "review_max_wrong_share": REVIEW_MAX_WRONG,
        "min_words": MIN_WORDS,
    }
