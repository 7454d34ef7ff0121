"""Prose columns: where a page's rows split into a left and a right column, read in turn.

A two-column letter read row by row interleaves its sentences, so the
layout model (``activities.pages.layout``) cuts such rows at the gutter and
reads the left column down before the right one. The gutter is an x that no
word comes near (half a gutter's width either side) over a run of
consecutive rows, with at least ``min_rows`` rows of text on each side and,
on each side, lines of ``prose`` words or more at the median. A form's label
list beside its values has the gap but not the prose, so its rows stay whole
and each label keeps its value on its line. Rows above and below the run,
and each column, are searched again (two levels: three or four columns).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Protocol, TypeVar


class _Placed(Protocol):
    """What a gutter is found from: where a word starts and ends across the page."""

    @property
    def x0(self) -> int: ...

    @property
    def x1(self) -> int: ...


T = TypeVar("T", bound=_Placed)


def blocks(
    rows: Sequence[list[T]], body: float, gutter: float, prose: int, min_rows: int
) -> list[list[T]]:
    """The rows in reading order, each row that spans a found gutter cut in two."""
    return _read(list(rows), body * gutter, prose, min_rows, depth=2)


def _read(
    rows: list[list[T]], width: float, prose: int, min_rows: int, depth: int
) -> list[list[T]]:
    found = _gutter(rows, width, prose, min_rows) if depth else None
    if found is None:
        return rows
    start, end, x = found
    left = [part for row in rows[start:end] if (part := [t for t in row if t.x1 <= x])]
    right = [part for row in rows[start:end] if (part := [t for t in row if t.x0 >= x])]
    return [
        *_read(rows[:start], width, prose, min_rows, depth),
        *_read(left, width, prose, min_rows, depth - 1),
        *_read(right, width, prose, min_rows, depth - 1),
        *_read(rows[end:], width, prose, min_rows, depth),
    ]


def _gutter(
    rows: list[list[T]], width: float, prose: int, min_rows: int
) -> tuple[int, int, float] | None:
    """The longest run of rows (start, end) a gutter at x splits into prose columns."""
    best: tuple[int, int, float] | None = None
    for x in _candidates(rows, width):
        for start, end in _runs(rows, x, width / 2):
            if _prose_both_sides(rows[start:end], x, prose, min_rows) and (
                best is None or end - start > best[1] - best[0]
            ):
                best = (start, end, x)
    return best


def _candidates(rows: list[list[T]], width: float) -> list[float]:
    """The middles of every gap of ``width`` or more between two words of a row."""
    found = {
        round((a.x1 + b.x0) / 2 / (width / 4)) * (width / 4)
        for row in rows
        for a, b in zip(row, row[1:], strict=False)
        if b.x0 - a.x1 >= width
    }
    return sorted(found)


def _runs(rows: list[list[T]], x: float, margin: float) -> list[tuple[int, int]]:
    """Maximal runs of consecutive rows with no word within ``margin`` of x."""
    runs, start = [], None
    for n, row in enumerate([*rows, None]):
        clear = row is not None and all(t.x1 + margin <= x or t.x0 - margin >= x for t in row)
        if clear and start is None:
            start = n
        elif not clear and start is not None:
            runs.append((start, n))
            start = None
    return runs


def _prose_both_sides(rows: Sequence[list[T]], x: float, prose: int, min_rows: int) -> bool:
    left = [n for row in rows if (n := sum(t.x1 <= x for t in row))]
    right = [n for row in rows if (n := sum(t.x0 >= x for t in row))]
    return (
        len(left) >= min_rows
        and len(right) >= min_rows
        and statistics.median(left) >= prose
        and statistics.median(right) >= prose
    )
