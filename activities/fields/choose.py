"""From readings to a field: the bar, conflicts, and "unsure is not a value".

Each way a field was read gives a ``Reading`` (value, where, how sure). The
surest one is the field's value only if it clears the field's bar and no
other reading nearly as sure says something else; otherwise the field needs
review and carries no value at all, so a guess is never published.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from activities.fields.layout import Token, span
from custody.fields import FieldStatus, FieldValueType, FoundField

#: A rival reading this close to the best one (as a share of its confidence)
#: with another value makes the field a conflict, sent to review.
CONFLICT_SHARE = 0.8
#: No reading built from heuristics is certain: the most any field reports.
MOST = 0.99


@dataclass(frozen=True)
class Reading:
    value: FieldValueType
    tokens: tuple[Token, ...]
    confidence: float
    method: str

    def box(self) -> list[int]:
        return span(list(self.tokens))


def decide(name: str, readings: Sequence[Reading], bar: float, *, seen: bool) -> FoundField:
    """The field from its readings; ``seen``: a label was found even if no value was read."""
    if not readings:
        return FoundField(name=name, status="review" if seen else "missing")
    ranked = sorted(readings, key=lambda r: -r.confidence)
    best = ranked[0]
    rival = any(
        _key(r.value) != _key(best.value) and r.confidence >= CONFLICT_SHARE * best.confidence
        for r in ranked[1:]
    )
    confidence = round(min(MOST, max(0.0, best.confidence)), 4)
    status: FieldStatus = "review" if rival or confidence < bar else "found"
    return FoundField(
        name=name,
        status=status,
        value=best.value if status == "found" else None,
        page=best.tokens[0].page,
        box=best.box(),
        confidence=confidence,
        method=best.method,
    )


def _key(value: FieldValueType) -> str:
    return "".join(str(value).lower().split())


def ocr_confidence(tokens: Sequence[Token]) -> float:
    """How sure OCR was of the weakest word: one misread letter spoils a value."""
    return min((t.confidence for t in tokens), default=0.0)
