"""Form pairs against FUNSD's question-to-answer links: the ``pairs`` figures of ``bench fields``.

A FUNSD annotation (``_annotations/<stem>.json`` beside a scan) lists
entities with a label and links between them. ``expected`` counts each
question-to-answer link whose answer has text once, whichever entity lists it
(FUNSD lists most twice), as ``forms_dev/MANIFEST.md`` counts them. A
predicted pair is correct when its key matches the link's question and its
value the link's answer, each with token F1 of at least 0.8 on the project's
token scale (``textmetrics.token_f1``: lower-cased letter-and-digit runs, so a
colon read or not is no difference); each link is matched at most once, and
the correct count is the largest such matching, so the order pairs come in
never changes the score.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custody.fields import FormPair
from starter.bench.fields_score import Truth
from starter.bench.textmetrics import token_f1

#: Token F1 a key and a value each need against the linked question and answer.
MATCH = 0.8


@dataclass(frozen=True)
class Link:
    question: str
    answer: str


def links_for(scan: Path) -> list[Link] | None:
    """The scan's FUNSD links, or None when it has no FUNSD annotation."""
    path = scan.parent / "_annotations" / f"{scan.stem}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    return links(data) if isinstance(data, dict) and "form" in data else None


def form_truth(scan: Path) -> Truth | None:
    """A scan with FUNSD links is a generic form whose truth is its links (no named fields)."""
    return Truth("form", {}) if links_for(scan) is not None else None


def links(annotation: dict[str, Any]) -> list[Link]:
    """Distinct question-to-answer links with a non-empty answer, in either direction."""
    entities = {e["id"]: e for e in annotation["form"]}
    found: dict[tuple[int, int], Link] = {}
    for entity in annotation["form"]:
        for a, b in entity.get("linking", []):
            ends = [entities.get(a), entities.get(b)]
            if any(e is None for e in ends):
                continue
            labels = {e["label"]: e for e in ends if e is not None}
            question, answer = labels.get("question"), labels.get("answer")
            if question is None or answer is None or not answer["text"].strip():
                continue
            found[(question["id"], answer["id"])] = Link(question["text"], answer["text"])
    return [found[k] for k in sorted(found)]


def correct(predicted: Sequence[tuple[str, str]], truth: Sequence[Link]) -> int:
    """The most predicted pairs that can each be given a different matching link."""
    fits = [
        [
            j
            for j, link in enumerate(truth)
            if token_f1(key, link.question) >= MATCH and token_f1(value, link.answer) >= MATCH
        ]
        for key, value in predicted
    ]
    owner: dict[int, int] = {}
    return sum(_augment(i, fits, owner, set()) for i in range(len(fits)))


def _augment(i: int, fits: list[list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    """Kuhn's augmenting path: give pair ``i`` a link, moving earlier pairs if need be."""
    for j in fits[i]:
        if j in seen:
            continue
        seen.add(j)
        if j not in owner or _augment(owner[j], fits, owner, seen):
            owner[j] = i
            return True
    return False


@dataclass
class PairTally:
    expected: int = 0
    predicted: int = 0
    correct: int = 0

    def add(self, truth: Sequence[Link], read: Sequence[FormPair]) -> None:
        """One document's links and the pairs read from it (none when nothing was published)."""
        pairs = [(p.key, p.value) for p in read]
        self.expected += len(truth)
        self.predicted += len(pairs)
        self.correct += correct(pairs, truth)

    def figures(self) -> dict[str, Any]:
        precision = self.correct / self.predicted if self.predicted else None
        recall = self.correct / self.expected if self.expected else None
        f1 = None
        if precision is not None and recall is not None:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "expected": self.expected,
            "predicted": self.predicted,
            "correct": self.correct,
            "precision": _round(precision),
            "recall": _round(recall),
            "f1": _round(f1),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
