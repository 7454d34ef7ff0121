"""Checkboxes found on a page image: crossed, ticked past the border, filled in, or empty."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from activities.fields.consent import MARKED
from activities.fields.marks import find_marks


def _sheet(mark: str) -> np.ndarray:
    """An A4 page at 200 dpi: one 30 px box marked as ``mark``, then words with round letters."""
    image = Image.new("L", (1654, 2339), 246)
    draw = ImageDraw.Draw(image)
    x, y = 200, 300
    draw.rectangle((x, y, x + 30, y + 30), outline=30, width=3)
    if mark == "cross":
        draw.line((x + 6, y + 6, x + 24, y + 24), fill=30, width=4)
        draw.line((x + 24, y + 6, x + 6, y + 24), fill=30, width=4)
    elif mark == "tick":  # overshooting the top right corner, as a pen does
        draw.line((x + 5, y + 16, x + 13, y + 27, x + 38, y - 10), fill=30, width=4)
    elif mark == "filled":
        draw.rectangle((x + 4, y + 4, x + 26, y + 26), fill=30)
    draw.text(
        (x + 50, y - 4), "Do not consent: O o 0 D Q", font=ImageFont.load_default(size=34), fill=30
    )
    return np.asarray(image)


def test_find_marks_finds_the_box_however_it_is_marked() -> None:
    """One box each time, where it is printed; inked when marked, empty when not."""
    for mark in ("cross", "tick", "filled", "none"):
        marks = find_marks(_sheet(mark))
        assert len(marks) == 1, mark
        x0, y0, x1, y1 = marks[0].box
        assert abs(x0 - 200) <= 2 and abs(y0 - 300) <= 2 and abs(x1 - 231) <= 2, mark
        assert (marks[0].ink >= MARKED) == (mark != "none"), mark
