"""From readings to a field: the bar, conflicts, and "unsure is not a value".

Each way a field was read gives a ``Reading`` (value, where, how sure). The
surest one is the field's value only if it clears the field's bar and no
other reading nearly as sure says something else; otherwise the field needs
review and carries no value at all, so a guess is never published.

Two kinds of reading never clear a bar, whatever their words' confidence,
because nothing on the page says the value is this field's: one found by
position alone (a letter's date line among other dates, a signature, a heading, the words after
a reason's cue in a sentence; ``anchored`` false), and one whose label does not
single it out among rivals of its type (``contested``: several dates,
identifiers or names on the page, and the label generic, misread, or not beside
the value). Both are held at
``UNSINGLED``, below every bar (``referral.BARS``), so they go to review
with their value kept for the reviewer's eyes only.
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
#: The most a reading may be that no label singles out (by position alone, or among
#: rivals of its type): below every field's bar, so it always goes to review.
UNSINGLED = 0.85


@dataclass(frozen=True)
class Reading:
    value: FieldValueType
    tokens: tuple[Token, ...]
    confidence: float
    method: str
    #: Read beside a label (or a sentence's cue for the field), not by position alone.
    anchored: bool = True
    #: Rivals of the value's type stand where the label could point as well.
    contested: bool = False

    @property
    def singled_out(self) -> bool:
        """Whether the page's evidence names this value as the field's, and no rival."""
        return self.anchored and not self.contested

    def box(self) -> list[int]:
        return span(list(self.tokens))


def decide(name: str, readings: Sequence[Reading], bar: float, *, seen: bool) -> FoundField:
    """The field from its readings; ``seen``: a label was found even if no value was read."""
    if not readings:
        return FoundField(name=name, status="review" if seen else "missing")
    # A reading no label singles out ranks as what it may be (UNSINGLED at most), so a
    # labelled one OCR was a little less sure of is still preferred to it.
    ranked = sorted(readings, key=lambda r: (-_most(r), -r.confidence))
    best = ranked[0]
    rival = any(
        _key(r.value) != _key(best.value) and r.confidence >= CONFLICT_SHARE * best.confidence
        for r in ranked[1:]
    )
    confidence = round(_most(best), 4)
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


def _most(reading: Reading) -> float:
    """The reading's confidence as it may be published: UNSINGLED at most unless singled out."""
    return min(MOST if reading.singled_out else UNSINGLED, max(0.0, reading.confidence))


def _key(value: FieldValueType) -> str:
    return "".join(str(value).lower().split())


def ocr_confidence(tokens: Sequence[Token]) -> float:
    """How sure OCR was of the weakest word: one misread letter spoils a value."""
    return min((t.confidence for t in tokens), default=0.0)
