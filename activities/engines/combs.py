"""Characters printed one to a box (comb fields): found by the boxes' rules, read as words.

Forms ask for identifiers and dates in comb boxes, a character a box, so that
hands print them legibly. PP-OCRv6 finds no text line in such a row: the rule
between each two characters breaks it up, and on the comb forms of the fifth
blind generator (``starter.bench.referrals_e``) every comb row was missed or
read as stray characters ("R 8 2" for ``R4-842-268``), while a second engine
read the same boxes in a redacted view. So a page's comb rows are found by their
rules (morphological opening keeps only long horizontal and vertical strokes;
the cells are what the rules enclose), each row's characters are cut out of
their cells and set side by side as a printed word would be, and that strip is
read by the same engine: one word per row, boxed where the row is, in place of
whatever the page's own read made of it.

A row is two or more adjacent cells of one height, each no wider than about one
and a half times its height (a checkbox stands alone; a table's cells hold
words and are wider). Sizes are in pixels at 200 dpi and scale with the page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median_high

import cv2
import numpy as np

from custody.models import Word

_WIDTH_200DPI = 1654  # an A4 page's width at 200 dpi: the sizes below are for it
_INK = 160  # grey levels below this are ink
_RULE_X = 25  # px: a horizontal stroke at least this long is a rule
_RULE_Y = 18  # px: a vertical stroke at least this tall is a rule
_CELL_W = (12, 90)  # px: a cell's inside width, least and most
_CELL_H = (20, 90)  # px: its inside height
_SQUARE = 1.6  # a cell no wider than this many times its height
_FILLED = 0.6  # of its bounding box, a cell's inside fills at least this share
_ALIGN = 6  # px: cells of one row share their top and height within this
_ADJACENT = 12  # px: at most this between one cell's inside and the next's
_INSET = 3  # px: a cell's inside is cut this far in from its rules
_PAD = 16  # px of white around a strip
_WORD = 3  # characters: a word the page's read found in a row, not a stray character
_BAND = 6  # px: the band round a cell where its frame's rules lie
_GROUND = 0.75  # of that band, ink at most: a frame of rules, not a dark ground


@dataclass(frozen=True)
class Comb:
    """One row of adjacent cells, each ``(x, y, w, h)`` of its inside, left to right."""

    cells: tuple[tuple[int, int, int, int], ...]

    @property
    def box(self) -> tuple[int, int, int, int]:
        x0, y0 = min(c[0] for c in self.cells), min(c[1] for c in self.cells)
        x1 = max(c[0] + c[2] for c in self.cells)
        return x0, y0, x1, max(c[1] + c[3] for c in self.cells)


def find_combs(gray: np.ndarray) -> list[Comb]:
    """The page's comb rows, top to bottom."""
    scale = gray.shape[1] / _WIDTH_200DPI
    ink = (gray < _INK).astype(np.uint8)
    rules = _opened(ink, round(_RULE_X * scale), 1) | _opened(ink, 1, round(_RULE_Y * scale))
    rules = cv2.dilate(rules, np.ones((3, 3), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(1 - rules, connectivity=4)
    cells = [
        (int(x), int(y), int(w), int(h))
        for x, y, w, h, area in stats[1:count]
        if _is_cell(w, h, area, scale) and _framed(ink, (int(x), int(y), int(w), int(h)), scale)
    ]
    return _rows(sorted(cells, key=lambda c: (c[0], c[1])), scale)


def read_combs(
    gray: np.ndarray, words: Sequence[Word], read: Callable[[np.ndarray], list[Word]]
) -> list[Word]:
    """``words`` with each comb row's reading in place of the words inside the row.

    ``read`` is the engine's own read of an image (a strip here); a row it reads
    nothing in, or where the page's read found words (not stray characters), keeps
    the page's words as they were."""
    out = list(words)
    for comb in find_combs(gray):
        if any(len(w.text) >= _WORD for w in out if _inside(w, comb.box)):
            continue  # the page's read found words here: a table's row, not characters
        found = sorted(read(_strip(gray, comb)), key=lambda w: min(p[0] for p in w.box))
        if not found:
            continue
        out = [w for w in out if not _inside(w, comb.box)]
        x0, y0, x1, y1 = _inked(gray, comb)
        # One row is one value: its characters join into one word, boxed whole.
        text, sure = "".join(w.text for w in found), min(w.confidence for w in found)
        box = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
        out.append(Word(text=text, confidence=sure, box=box))
    return out


def _opened(ink: np.ndarray, w: int, h: int) -> np.ndarray:
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (max(1, w), max(1, h)))
    return cv2.morphologyEx(ink, cv2.MORPH_OPEN, kernel)


def _is_cell(w: int, h: int, area: int, scale: float) -> bool:
    wide = _CELL_W[0] * scale <= w <= _CELL_W[1] * scale
    tall = _CELL_H[0] * scale <= h <= _CELL_H[1] * scale
    return wide and tall and w <= _SQUARE * h and area >= _FILLED * w * h


def _framed(ink: np.ndarray, cell: tuple[int, int, int, int], scale: float) -> bool:
    """Whether a thin rule frames the cell, not a solid dark ground (the white letters of
    a reversed-out logo are enclosed too): the band just outside it is mostly paper."""
    x, y, w, h = cell
    b = max(2, round(_BAND * scale))
    if x < b or y < b or x + w + b > ink.shape[1] or y + h + b > ink.shape[0]:
        return False
    outer = int(ink[y - b : y + h + b, x - b : x + w + b].sum())
    around = outer - int(ink[y : y + h, x : x + w].sum())
    return around <= _GROUND * ((w + 2 * b) * (h + 2 * b) - w * h)


def _rows(cells: list[tuple[int, int, int, int]], scale: float) -> list[Comb]:
    """Cells chained left to right into rows: the next starts just after the last ends,
    at its height; a row of one cell is no comb."""
    align, gap = _ALIGN * scale, _ADJACENT * scale
    used: set[int] = set()
    rows = []
    for i, first in enumerate(cells):
        if i in used:
            continue
        row, last = [first], first
        used.add(i)
        for j in range(i + 1, len(cells)):
            c = cells[j]
            if j in used or abs(c[1] - last[1]) > align or abs(c[3] - last[3]) > align:
                continue
            if 0 <= c[0] - (last[0] + last[2]) <= gap:
                row.append(c)
                used.add(j)
                last = c
        if len(row) >= 2:
            rows.append(Comb(tuple(row)))
    return sorted(rows, key=lambda r: (r.box[1], r.box[0]))


def _strip(gray: np.ndarray, comb: Comb) -> np.ndarray:
    """The row's characters, each cut from its cell to its ink, side by side on white."""
    scale = gray.shape[1] / _WIDTH_200DPI
    inset, pad = max(1, round(_INSET * scale)), round(_PAD * scale)
    height = max(c[3] for c in comb.cells) - 2 * inset
    parts = []
    for cx, cy, cw, ch in comb.cells:
        cell = gray[cy + inset : cy + ch - inset, cx + inset : cx + cw - inset]
        inked = np.nonzero((cell < _INK).any(axis=0))[0]
        if len(inked):
            cell = cell[:, max(0, inked[0] - 2) : inked[-1] + 3]
        else:  # an empty cell: a narrow space
            cell = np.full((cell.shape[0], max(4, cell.shape[1] // 3)), 255, np.uint8)
        piece = np.full((height, cell.shape[1] + 3), 255, np.uint8)
        piece[: min(height, cell.shape[0]), : cell.shape[1]] = cell[:height]
        parts.append(piece)
    body = np.concatenate(parts, axis=1)
    strip = np.full((height + 2 * pad, body.shape[1] + 2 * pad), 255, np.uint8)
    strip[pad : pad + height, pad : pad + body.shape[1]] = body
    return strip


def _inked(gray: np.ndarray, comb: Comb) -> tuple[int, int, int, int]:
    """The row's box drawn round its characters' ink, as a printed word's box is (its
    cells are taller than the characters, and the line a word joins goes by its box)."""
    inset = max(1, round(_INSET * gray.shape[1] / _WIDTH_200DPI))
    tops, bottoms = [], []
    for cx, cy, cw, ch in comb.cells:
        inside = gray[cy + inset : cy + ch - inset, cx + inset : cx + cw - inset] < _INK
        rows = np.nonzero(inside.any(axis=1))[0]
        if len(rows):
            tops.append(cy + inset + int(rows[0]))
            bottoms.append(cy + inset + int(rows[-1]) + 1)
    x0, y0, x1, y1 = comb.box
    # The median cell's: a rule's stray pixels left in one cell move no edge.
    return (x0, median_high(tops), x1, median_high(bottoms)) if tops else (x0, y0, x1, y1)


def _inside(word: Word, box: tuple[int, int, int, int]) -> bool:
    """Whether the word's centre lies in ``box``."""
    cx = sum(p[0] for p in word.box) / len(word.box)
    cy = sum(p[1] for p in word.box) / len(word.box)
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]
