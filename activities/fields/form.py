"""Generic forms: key-to-value pairs (FUNSD's question-to-answer links) found by layout alone.

Any form, no schema: the page's words become phrases (``phrases``) and each
linker proposes the pairs its layout shows, each with the method that found
it: a label beside its value, with or without a colon, alone or in a column
of labels (``keyed``); a table's cell with its column header and its row
label (``grid``); a ticked box with its option's label (``ticks``).

Precision first: a pair that might be wrong is left out rather than given.
Each method's confidence is the share of its pairs that were right on the 30
forms it was tuned on (``forms_dev``, ``docs/fields.md``), times how sure OCR
was of the weakest word; pairs under :data:`BAR` are not given at all. A
phrase is a key or a value, never both, and a value has one key across
(beside it) and one above.
"""

from __future__ import annotations

from collections.abc import Sequence

from activities.fields.choose import ocr_confidence
from activities.fields.grid import table_pairs
from activities.fields.keyed import keyed_pairs
from activities.fields.layout import Line, span
from activities.fields.normalise import plain_text
from activities.fields.phrases import Phrase, Proposal, phrases, sheets
from activities.fields.ticks import tick_pairs
from custody.fields import FormPair
from custody.models import Mark

#: Share of each method's pairs that were right on the 30 tuning forms (``checkbox``:
#: two of two there, too few to measure; a prior).
PRECISION = {"beside": 0.65, "named": 0.79, "label-column": 0.74, "table": 0.56, "checkbox": 0.7}
#: Pairs less sure than this are not given: a table cell OCR was not sure of, for one.
BAR = 0.5


def read_pairs(lines: Sequence[Line], marks: dict[int, list[Mark]] | None = None) -> list[FormPair]:
    """Every pair the page's layout shows surely enough, in reading order."""
    pairs: list[FormPair] = []
    for sheet in sheets(phrases(lines)):
        proposals = [
            *keyed_pairs(sheet),
            *table_pairs(sheet),
            *tick_pairs(sheet, (marks or {}).get(sheet.phrases[0].page, [])),
        ]
        pairs.extend(_pair(p) for p in _resolve(proposals))
    return [p for p in pairs if p.confidence >= BAR]


def _resolve(proposals: Sequence[Proposal]) -> list[Proposal]:
    """The surest proposals first; a phrase stays a key or a value, a value keeps one key a side."""
    roles: dict[Phrase, str] = {}
    taken: set[tuple[Phrase, str]] = set()
    kept: list[Proposal] = []
    for prop in sorted(proposals, key=lambda p: -_confidence(p)):
        side = (prop.value[0] if prop.value else prop.key, "above" if prop.vertical else "across")
        if roles.get(prop.key) == "value" or any(roles.get(v) == "key" for v in prop.value):
            continue
        if side in taken:
            continue
        taken.add(side)
        roles[prop.key] = "key"
        roles.update({v: "value" for v in prop.value})
        kept.append(prop)
    return sorted(kept, key=lambda p: (p.key.line, p.key.pos))


def _confidence(prop: Proposal) -> float:
    tokens = [t for p in (prop.key, *prop.value) for t in p.tokens]
    return round(PRECISION[prop.method] * ocr_confidence(tokens), 4)


def _pair(prop: Proposal) -> FormPair:
    value_tokens = [t for p in prop.value for t in p.tokens]
    return FormPair(
        key=plain_text(prop.key.text),
        value=prop.shown or plain_text(" ".join(p.text for p in prop.value)),
        page=prop.key.page,
        key_box=span(list(prop.key.tokens)),
        value_box=prop.box or span(value_tokens),
        confidence=_confidence(prop),
        method=prop.method,
    )
