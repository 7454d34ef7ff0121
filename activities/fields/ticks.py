"""Checkbox groups: which options are ticked, as pairs of the option's label and the tick.

Two ways a tick shows. The engine reads it as a word of its own (an ``X`` or
a tick glyph alone, just before or after its option's label), or it does
not and only the page's boxes (``PageText.marks``, found where the pixels
were) show it. A box counts only inside a group: two or more boxes on one
line or down one column, each beside a label, at least one clearly empty and
the ticked ones clearly inked, so a letter ``O`` taken for a box or a page
of smudges never reads as a tick. Unticked options give no pair: FUNSD links
only what was marked, and an empty box answers nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from activities.fields.phrases import Phrase, Proposal, Sheet
from custody.models import Mark

#: Words an engine reads for a tick or a cross.
TICK_WORDS = frozenset({"x", "X", "✓", "✔", "☑", "☒", "⊠"})
#: Ink inside a box above which it is ticked, and below which it is empty (as consent reads).
TICKED = 0.10
EMPTY = 0.03
#: What a ticked box's value reads as.
TICKED_GLYPH = "☑"
#: How far from its label a tick may stand, in the label's heights.
_REACH = 3.0


def tick_pairs(sheet: Sheet, marks: Sequence[Mark]) -> Iterable[Proposal]:
    yield from _read_ticks(sheet)
    yield from _boxed_ticks(sheet, marks)


def _read_ticks(sheet: Sheet) -> Iterable[Proposal]:
    for tick in sheet.phrases:
        if tick.text not in TICK_WORDS:
            continue
        label = _label_beside(sheet, tick.line, tick.x0, tick.x1, tick.h)
        if label is not None:
            yield Proposal(label, (tick,), "checkbox")


def _boxed_ticks(sheet: Sheet, marks: Sequence[Mark]) -> Iterable[Proposal]:
    boxes = [(m, _label_of_box(sheet, m)) for m in marks if not _inside_a_word(sheet, m)]
    labelled = [(m, label) for m, label in boxes if label is not None]
    for mark, label in labelled:
        group = [m for m, other in labelled if _same_group(label, other)]
        clear = len(group) >= 2 and any(m.ink <= EMPTY for m in group)
        if clear and mark.ink >= TICKED:
            yield Proposal(label, (), "checkbox", shown=TICKED_GLYPH, box=list(mark.box))


def _label_of_box(sheet: Sheet, mark: Mark) -> Phrase | None:
    x0, y0, x1, y1 = mark.box
    row = [p for p in sheet.phrases if p.y0 <= (y0 + y1) / 2 <= p.y1]
    if not row:
        return None
    return _label_beside(sheet, row[0].line, x0, x1, max(1, y1 - y0))


def _label_beside(sheet: Sheet, line: int, x0: int, x1: int, h: int) -> Phrase | None:
    """The words starting just right of ``x1`` on ``line`` (else ending just left of ``x0``)."""
    row = [p for p in sheet.phrases if p.line == line and p.wordy]
    right = [p for p in row if 0 <= p.x0 - x1 <= _REACH * h]
    left = [p for p in row if 0 <= x0 - p.x1 <= _REACH * h]
    if right:
        return min(right, key=lambda p: p.x0)
    return max(left, key=lambda p: p.x1) if left else None


def _inside_a_word(sheet: Sheet, mark: Mark) -> bool:
    """A box inside a word the engine read is a letter (an ``O``, a ``D``), not a box."""
    x0, y0, x1, y1 = mark.box
    return any(
        t.x0 <= x0 and x1 <= t.x1 and t.y0 - 2 <= y0 and y1 <= t.y1 + 2
        for p in sheet.phrases
        for t in p.tokens
    )


def _same_group(a: Phrase, b: Phrase) -> bool:
    """Options of one group: on one line, or starting one under the other."""
    return a.line == b.line or abs(a.x0 - b.x0) < a.h
