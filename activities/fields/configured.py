"""The generic reader of a configured document type: any type a tenant declares, no code.

Each field's labels (``custody.doctypes.FieldSpec.labels``) are looked for at
the start of the page's phrases (``phrases``), letters folded as OCR
confuses them and a long word one edit off; when several fields' labels fit
one phrase, the one covering most of its words owns it ("Discharged by" is
the clinician, not the discharge date). A label printed with its colon must
be the whole phrase. The value is read where forms put it: in the same
phrase after the label, in the phrase right of it, or in the one just under
it; and it is read as its value type says (``typed``). A label seen without
a value that reads as its type is ``review``; no label at all is
``missing``; an unsure or conflicting reading is ``review`` with no value
(``choose.decide``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from activities.fields.choose import Reading, decide
from activities.fields.layout import Line, Token
from activities.fields.normalise import edit_distance
from activities.fields.phrases import Phrase, Sheet, phrases, sheets
from activities.fields.typed import read_value
from custody.doctypes import FieldSpec, TypeSpec
from custody.fields import FoundField
from custody.models import Mark

#: How sure a value is from where it stands: beside its label, or under it.
_BESIDE = 0.9
_BELOW = 0.75
#: Fields read less surely than this need review.
BAR = 0.6
_FOLD = str.maketrans({"0": "o", "1": "i", "l": "i", "|": "i", "5": "s"})


@dataclass(frozen=True)
class _Label:
    field: str
    phrase: Phrase
    words: int  # how many of the phrase's words the label covers


def read_configured(
    spec: TypeSpec, lines: Sequence[Line], marks: Mapping[int, list[Mark]]
) -> dict[str, FoundField]:
    """Every field of ``spec`` as read from the document's lines."""
    readings: dict[str, list[Reading]] = {name: [] for name in spec.fields}
    seen: set[str] = set()
    for sheet in sheets(phrases(lines)):
        for label in _labels(sheet, spec.fields):
            seen.add(label.field)
            field = spec.fields[label.field]
            page_marks = marks.get(label.phrase.page, [])
            for tokens, geometry, method in _values(sheet, label, field.type):
                reading = read_value(field, tokens, page_marks, geometry, method)
                if reading is not None:
                    readings[label.field].append(reading)
    return {name: decide(name, readings[name], BAR, seen=name in seen) for name in spec.fields}


def _labels(sheet: Sheet, fields: Mapping[str, FieldSpec]) -> Iterator[_Label]:
    """Each phrase that starts with a field's label, given to the field whose label fits most."""
    for phrase in sheet.phrases:
        words = _words(phrase.text)
        best: _Label | None = None
        for name, field in fields.items():
            for variant in field.labels:
                wanted = _words(variant)
                fits = _starts_with(words, wanted) and (
                    not phrase.colon or len(wanted) == len(words)
                )
                if fits and (best is None or len(wanted) > best.words):
                    best = _Label(name, phrase, len(wanted))
        if best is not None:
            yield best


def _values(
    sheet: Sheet, label: _Label, kind: str
) -> Iterator[tuple[tuple[Token, ...], float, str]]:
    """Where the label's value may stand, each with how sure its place makes it."""
    phrase = label.phrase
    if kind == "checkbox":
        yield phrase.tokens, _BESIDE, "checkbox"  # its box stands beside the label itself
    inline = _after_words(phrase, label.words)
    if inline:
        yield inline, _BESIDE, "label:inline"
    right = sheet.right(phrase)
    if right is not None and not right.colon:  # another label's, not this one's value
        yield right.tokens, _BESIDE, "label:right-of"
    under = [
        p
        for p in sheet.phrases
        if p.line > phrase.line
        and p.overlaps(phrase)
        and 0 <= p.y0 - phrase.y1 < 2.5 * phrase.h
        and not p.colon
    ]
    if under and not inline and (right is None or right.colon):
        yield min(under, key=lambda p: p.y0).tokens, _BELOW, "label:below"


def _after_words(phrase: Phrase, count: int) -> tuple[Token, ...]:
    """The phrase's tokens after its first ``count`` words (a label read into its value)."""
    seen = 0
    for i, tok in enumerate(phrase.tokens):
        seen += len(_words(tok.text))
        if seen >= count:
            return phrase.tokens[i + 1 :]
    return ()


def _words(text: str) -> list[str]:
    folded = "".join(c if c.isalnum() else " " for c in text.lower())
    return [w.translate(_FOLD) for w in folded.split()]


def _starts_with(words: list[str], wanted: list[str]) -> bool:
    if not wanted or len(words) < len(wanted):
        return False
    return all(_same(a, b) for a, b in zip(words, wanted, strict=False))


def _same(seen: str, wanted: str) -> bool:
    """Equal, or one edit off for a word of five letters or more (OCR's slips)."""
    return seen == wanted or (len(wanted) >= 5 and edit_distance(seen, wanted) <= 1)
