"""Consent, read from the box marked beside "Yes" or "No" after the consent label.

OCR seldom reads a tick or a cross, so the OCR activity records each page's
small square boxes and the ink inside them (``PageText.marks``). Consent is
the option whose box is clearly inked while the other's is clearly empty;
anything else (both marked, neither, a smudge, no boxes found) is review.
A label followed by a plain "Yes" or "No" and no boxes is read as written.
"""

from __future__ import annotations

from collections.abc import Sequence

from activities.fields.anchors import Anchor
from activities.fields.choose import Reading, decide, ocr_confidence
from activities.fields.layout import Line, Token
from activities.fields.normalise import consent_word
from custody.fields import FoundField
from custody.models import Mark, PageText

#: Ink share inside a box above which it is marked, and below which it is empty.
MARKED = 0.10
EMPTY = 0.03
#: How sure a box reading is when one box is clearly marked and the other clearly empty.
BOX_CONFIDENCE = 0.97


def read_consent(
    pages: Sequence[PageText], lines: Sequence[Line], anchors: Sequence[Anchor], bar: float
) -> FoundField:
    own = [a for a in anchors if a.kind == "consent"]
    marks = {page.page: page.marks for page in pages}
    readings = []
    for anchor in own:
        options = _options(anchor, lines[anchor.line], anchors)
        reading = _from_boxes(options, marks.get(lines[anchor.line].page, []))
        if reading is None and len(options) == 1:
            value, tok = options[0]
            reading = Reading(
                value, (tok,), anchor.score * ocr_confidence([tok]), "anchor:right-of"
            )
        if reading is not None:
            readings.append(reading)
    return decide("consent", readings, bar, seen=bool(own))


def _options(anchor: Anchor, line: Line, anchors: Sequence[Anchor]) -> list[tuple[bool, Token]]:
    """The yes/no words after the label on its line, up to the next label."""
    stop = min(
        (a.start for a in anchors if a.line == anchor.line and a.start >= anchor.end),
        default=len(line.tokens),
    )
    found: list[tuple[bool, Token]] = []
    for tok in line.tokens[anchor.end : stop]:
        value = consent_word(tok.text)
        if value is not None and all(v != value for v, _ in found):
            found.append((value, tok))
    return found


def _from_boxes(options: list[tuple[bool, Token]], marks: Sequence[Mark]) -> Reading | None:
    if len(options) != 2 or not marks:
        return None
    inks = [(value, tok, _box_beside(tok, marks)) for value, tok in options]
    if any(mark is None for _, _, mark in inks):
        return None
    marked = [(v, t) for v, t, m in inks if m is not None and m.ink >= MARKED]
    empty = [(v, t) for v, t, m in inks if m is not None and m.ink <= EMPTY]
    if len(marked) != 1 or len(empty) != 1:
        return None  # both, neither, or a smudge: a person looks
    value, tok = marked[0]
    return Reading(value, (tok,), BOX_CONFIDENCE, "checkbox")


def _box_beside(tok: Token, marks: Sequence[Mark]) -> Mark | None:
    """The box just left of the option's word (or just right of it), on its line."""
    h = tok.height
    best: tuple[float, Mark] | None = None
    for mark in marks:
        x0, y0, x1, y1 = mark.box
        if not y0 - h <= tok.cy <= y1 + h:
            continue
        left = tok.x0 - x1
        right = x0 - tok.x1
        # The box may be read into the word ("□No"): then it overlaps the word's start.
        distance = (
            max(0, left)
            if -1.5 * h <= left <= 3 * h
            else right
            if -0.3 * h <= right <= 3 * h
            else None
        )
        if distance is not None and (best is None or distance < best[0]):
            best = (distance, mark)
    return best[1] if best else None
