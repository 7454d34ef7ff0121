"""Tables on a form: each number with its column's header and its row's label.

FUNSD links a table's cell to both: "Male" -> "2.0" and "SCORE" -> "2.0". A
cell is a numeric phrase in a grid (another cell under its header and
another on its row); its header is the first phrase of words above it in its
column, passing only other cells on the way up, joined with the words just
over it when a header takes two lines ("Number of" / "Stores"); its row label
is the phrase of words at the start of its line, passing only cells on the
way left. A cell gets both or neither: a number with only one of them is a
figure in running text, a date or a page number, not a table's cell. When the
row label has a header of its own in the header row, the first column is
data ("Name of Account" over the accounts): the label is that header's value,
and no row label is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from activities.fields.phrases import Phrase, Proposal, Sheet

#: How far above its cell a header may stand, in the cell's heights.
_REACH = 25.0
#: A header or a row label is a few words; a sentence is neither.
_HEADER_WORDS = 4
_COUNT = re.compile(r"\(\s*\d+\s*\)")


def table_pairs(sheet: Sheet) -> Iterable[Proposal]:
    for cell in sheet.phrases:
        if not cell.numeric:
            continue
        header, row_label = _header(sheet, cell), _row_label(sheet, cell)
        if header is None or row_label is None or not _in_grid(sheet, cell, header[-1]):
            continue
        top = _joined(header)
        yield Proposal(top, (cell,), "table", vertical=True)
        first = _header(sheet, row_label)
        if first is not None and _level(_joined(first), top):
            yield Proposal(_joined(first), (row_label,), "table", vertical=True)
        else:
            yield Proposal(row_label, (cell,), "table")


def _header(sheet: Sheet, cell: Phrase) -> list[Phrase] | None:
    """The header's phrases over ``cell``, top line first (one to three lines)."""
    over = sheet.above(cell, _REACH)
    for n, phrase in enumerate(over):
        if phrase.numeric:
            continue
        if not _names(phrase) or _spans_cells(sheet, phrase, cell):
            return None
        header = [phrase]
        upper = next((p for p in over[n + 1 :] if p.line < phrase.line), None)
        if upper is not None and _caps(sheet, upper, phrase):
            header.insert(0, upper)
        count = over[n - 1] if n else None
        if count is not None and _count_under(count, phrase):
            header.append(count)
        return header
    return None


def _spans_cells(sheet: Sheet, header: Phrase, cell: Phrase) -> bool:
    """A header over two cells of one row heads a group of columns (or is two headers misread)."""
    return sum(1 for p in sheet.row(cell) if p.numeric and p.overlaps(header)) > 1


def _count_under(phrase: Phrase, header: Phrase) -> bool:
    """A count in brackets just under a header is part of it: "Total" / "(205)"."""
    return _COUNT.fullmatch(phrase.text) is not None and phrase.y0 - header.y1 < 0.8 * header.h


def _caps(sheet: Sheet, upper: Phrase, header: Phrase) -> bool:
    """``upper`` is the first line of ``header``: just over it and over nothing else."""
    tight = header.y0 - upper.y1 < 0.8 * header.h and _names(upper)
    under = [p for p in sheet.phrases if p.line == header.line and p.overlaps(upper)]
    return tight and under == [header]


def _joined(header: list[Phrase]) -> Phrase:
    if len(header) == 1:
        return header[0]
    last = header[-1]
    return Phrase(tuple(t for p in header for t in p.tokens), last.line, last.pos)


def _level(a: Phrase, b: Phrase) -> bool:
    """Two headers of one header row: their heights overlap."""
    return min(a.y1, b.y1) > max(a.y0, b.y0)


def _row_label(sheet: Sheet, cell: Phrase) -> Phrase | None:
    """The words starting the cell's row, with the line just over or under them if they
    run on there alone ("SMOOTHNESS" / "(7=Smoother)")."""
    for phrase in reversed(sheet.row(cell)[: cell.pos]):
        if phrase.numeric:
            continue
        if phrase.pos != 0 or not _names(phrase):
            return None
        over, under = _alone(sheet, phrase, -1), _alone(sheet, phrase, 1)
        if over is not None and under is None:
            return _joined([over, phrase])
        return _joined([phrase, under]) if under is not None and over is None else phrase
    return None


def _alone(sheet: Sheet, label: Phrase, step: int) -> Phrase | None:
    """The phrase alone on the line next to ``label``'s, starting where it starts, close by."""
    line = [p for p in sheet.phrases if p.line == label.line + step]
    if len(line) != 1:
        return None
    near = line[0]
    gap = near.y0 - label.y1 if step > 0 else label.y0 - near.y1
    starts = abs(near.x0 - label.x0) < 1.5 * label.h
    return near if starts and gap < 0.8 * label.h and not near.colon else None


def _in_grid(sheet: Sheet, cell: Phrase, header: Phrase) -> bool:
    """Another cell under the same header, and another on the same row: a grid, not a figure."""
    column = [
        p
        for p in sheet.phrases
        if p is not cell and p.numeric and p.overlaps(cell) and p.line > header.line
    ]
    row = [p for p in sheet.row(cell) if p is not cell and p.numeric]
    return bool(column) and bool(row)


def _names(phrase: Phrase) -> bool:
    """A few words, no colon: how a header or a row label is printed."""
    return phrase.wordy and not phrase.colon and len(phrase.text.split()) <= _HEADER_WORDS
