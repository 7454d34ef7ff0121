"""Words from a PP-OCR text line, when the recogniser gave no word boxes of its own.

PP-OCR detects and reads lines. Its recogniser's character positions give
word boxes (``RapidTuning.word_boxes``); a line it could not place them for
is split here on spaces, each word's box cut from the line's quadrilateral in
proportion to its characters, so a searchable PDF and field extraction still
see one box per word. Each word carries its line's score.

Either way a box is loose: the detector grows each line around its text, and
the character positions split the gaps between words. ``tighten`` shrinks an
upright box to the ink inside it, as tight as Tesseract's, so a searchable
PDF's invisible words keep the gaps between them that a reader's text
extraction turns into spaces (measured: phototest's layer read "alot of12"
from loose boxes, "a lot of 12" from tightened ones).

Both run inside the lane helper (``activities.engines.rapid_reader``), beside
the page's pixels, not in the worker process.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Quad = list[list[float]]

_MIN_CONTRAST = 48  # grey levels between ink and paper below which a box is left as it is
_UPRIGHT_PX = 2.0  # a box whose top edge rises more than this is rotated: left as it is


def line_words(quad: Quad, text: str, score: float) -> list[tuple[str, float, Quad]]:
    """``(word, score, quad)`` for each space-separated word of the line, boxes proportional."""
    total = len(text)
    if total == 0:
        return []
    found: list[tuple[str, float, Quad]] = []
    start = 0
    for word in text.split(" "):
        end = start + len(word)
        if word:
            found.append((word, score, _slice(quad, start / total, end / total)))
        start = end + 1  # the space
    return found


def _slice(quad: Quad, a: float, b: float) -> Quad:
    """The part of ``quad`` (top-left, top-right, bottom-right, bottom-left) from ``a`` to ``b``."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = quad

    def top(f: float) -> list[float]:
        return [x0 + (x1 - x0) * f, y0 + (y1 - y0) * f]

    def bottom(f: float) -> list[float]:
        return [x3 + (x2 - x3) * f, y3 + (y2 - y3) * f]

    return [top(a), top(b), bottom(b), bottom(a)]


def tighten(gray: npt.NDArray[np.uint8], quad: Quad) -> Quad:
    """An upright box shrunk to the dark pixels inside it; other boxes as they are."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = quad
    if abs(y1 - y0) > _UPRIGHT_PX or abs(x3 - x0) > _UPRIGHT_PX:
        return quad
    left, top = max(int(min(x0, x3)), 0), max(int(min(y0, y1)), 0)
    right, bottom = int(np.ceil(max(x1, x2))), int(np.ceil(max(y2, y3)))
    crop = gray[top:bottom, left:right]
    if crop.size == 0 or int(crop.max()) - int(crop.min()) < _MIN_CONTRAST:
        return quad
    ink = crop < (int(crop.min()) + int(crop.max())) / 2
    cols, rows = np.flatnonzero(ink.any(axis=0)), np.flatnonzero(ink.any(axis=1))
    x_a, x_b = float(left + cols[0]), float(left + cols[-1] + 1)
    y_a, y_b = float(top + rows[0]), float(top + rows[-1] + 1)
    return [[x_a, y_a], [x_b, y_a], [x_b, y_b], [x_a, y_b]]
