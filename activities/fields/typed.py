"""A configured field's value, read as its value type says (``custody.doctypes.ValueType``).

``date``: the one date the words print, as an ISO date (a date repaired from
OCR's slips is less sure; two different dates are no reading). ``identifier``:
the words as printed without the punctuation around them, or the run of
words that matches the field's pattern. ``name``: words with letters, a few of
them, no figures. ``text``: as printed. ``number``: a decimal. ``checkbox``:
true when a tick is read beside the label or its box is inked, false when its
box is clearly empty. Words that do not read as the type give no reading, so
a stray word beside a label is never a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from activities.fields.choose import Reading, ocr_confidence
from activities.fields.layout import Token, joined
from activities.fields.normalise import dates_in, decimal_text, identifier, plain_text
from activities.fields.ticks import EMPTY, TICK_WORDS, TICKED
from custody.doctypes import FieldSpec
from custody.fields import FieldValueType
from custody.models import Mark

#: How much a repaired date (an O read for a 0, a month one letter off) is trusted.
_REPAIRED = 0.85
#: A name is a few words.
_NAME_WORDS = 6


def read_value(
    field: FieldSpec,
    tokens: Sequence[Token],
    marks: Sequence[Mark],
    geometry: float,
    method: str,
) -> Reading | None:
    """``tokens`` read as ``field``'s type, or None when they are not one."""
    if not tokens:
        return None
    if field.type == "checkbox":
        return _checkbox(tokens, marks, geometry, method)
    parsed = _parse(field, list(tokens))
    if parsed is None:
        return None
    value, used, trust = parsed
    confidence = geometry * trust * ocr_confidence(used)
    return Reading(value, tuple(used), round(confidence, 4), method)


def _parse(
    field: FieldSpec, tokens: list[Token]
) -> tuple[FieldValueType, list[Token], float] | None:
    text = joined(tokens)
    if field.type == "date":
        hits = dates_in(text)
        if not hits or len({h.iso for h in hits}) > 1:
            return None
        return hits[0].iso, tokens, _REPAIRED if hits[0].repaired else 1.0
    if field.type == "identifier":
        return _identifier(tokens, field.pattern)
    if field.type == "number":
        value = decimal_text(text) if re.search(r"\d", text) else None
        return None if value is None else (value, tokens, 1.0)
    if field.type == "name":
        words = plain_text(text).split()
        named = 0 < len(words) <= _NAME_WORDS and not re.search(r"\d", text)
        return (" ".join(words), tokens, 1.0) if named and re.search(r"[^\W\d_]", text) else None
    shown = plain_text(text)
    return (shown, tokens, 1.0) if shown else None


def _identifier(tokens: list[Token], pattern: str | None) -> tuple[str, list[Token], float] | None:
    """The whole run as printed, else (with a pattern) the first word that matches it."""
    whole = identifier(joined(tokens))
    if pattern is None or re.fullmatch(pattern, whole):
        return (whole, tokens, 1.0) if whole else None
    for tok in tokens:
        if re.fullmatch(pattern, identifier(tok.text)):
            return identifier(tok.text), [tok], 1.0
    return None


def _checkbox(
    tokens: Sequence[Token], marks: Sequence[Mark], geometry: float, method: str
) -> Reading | None:
    """A tick word alone, or the box just left of the words or just right of them."""
    if len(tokens) == 1 and tokens[0].text in TICK_WORDS:
        return Reading(True, tuple(tokens), round(geometry * tokens[0].confidence, 4), "checkbox")
    box = _box_beside(tokens[0], tokens[-1], marks)
    if box is None or EMPTY < box.ink < TICKED:
        return None  # no box, or a smudge: nothing read
    return Reading(box.ink >= TICKED, tuple(tokens), round(geometry * 0.95, 4), "checkbox")


def _box_beside(first: Token, last: Token, marks: Sequence[Mark]) -> Mark | None:
    h = first.height
    for mark in marks:
        x0, y0, x1, y1 = mark.box
        level = y0 - h <= first.cy <= y1 + h
        if level and (-h <= first.x0 - x1 <= 3 * h or -h <= x0 - last.x1 <= 3 * h):
            return mark
    return None
