"""Comb rows (a character a box): found by their rules and read as one word each."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from activities.engines.base import OcrEngine
from activities.engines.combs import find_combs, read_combs
from activities.pages.layout import page_lines
from custody.models import Word

_CELL = 44  # px: a comb cell's side at 200 dpi


def _form(rows: list[tuple[str, list[str]]], checkbox: bool = False) -> np.ndarray:
    """A 200-dpi page: each row a label and its value's groups in comb boxes."""
    image = Image.new("L", (1654, 120 + 90 * len(rows)), 250)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=26)
    for n, (label, groups) in enumerate(rows):
        y = 80 + 90 * n
        draw.text((70, y + 8), label, fill=20, font=font)
        x = 600
        for group in groups:
            for char in group:
                draw.rectangle((x, y, x + _CELL, y + _CELL), outline=30, width=2)
                draw.text((x + 12, y + 8), char, fill=20, font=font)
                x += _CELL
            x += 24  # a gap between groups (DD MM YYYY)
    if checkbox:  # a consent box alone is no comb
        draw.rectangle((70, 30, 70 + 30, 60), outline=30, width=2)
    return np.asarray(image)


def test_find_combs_finds_each_group_of_boxes_and_no_lone_checkbox() -> None:
    """Three rows: an id of ten cells, a date of three groups (2, 2, 4), an id of eight;
    the lone checkbox above them is no comb."""
    page = _form(
        [
            ("Study ref.", ["R4-842-268"]),
            ("Birth date", ["21", "07", "1940"]),
            ("Case", ["U9186072"]),
        ],
        checkbox=True,
    )
    found = find_combs(page)
    assert [len(c.cells) for c in found] == [10, 2, 2, 4, 8]
    assert all(c.box[0] >= 600 and c.box[2] <= 600 + 12 * _CELL + 48 for c in found)


def test_read_combs_puts_one_word_per_row_in_place_of_the_pages_stray_reads() -> None:
    """What the reader reads in a row's strip is one word, boxed round the row's ink; the
    page's own stray words inside the row go; a row it reads nothing in changes nothing."""
    page = _form([("Case", ["U9186072"])])
    stray = Word(text="8", confidence=0.6, box=[[780, 90], [800, 90], [800, 120], [780, 120]])
    label = Word(text="Case", confidence=0.99, box=[[70, 88], [140, 88], [140, 114], [70, 114]])

    def reads(strip: np.ndarray) -> list[Word]:
        """Stand-in reader (the strip's content is checked by the real engine's test)."""
        assert strip.shape[0] < 2 * _CELL and strip.shape[1] < 8 * _CELL
        return [
            Word(text="U918", confidence=0.97, box=[[10, 5], [90, 5], [90, 35], [10, 35]]),
            Word(text="6072", confidence=0.99, box=[[100, 5], [180, 5], [180, 35], [100, 35]]),
        ]

    words = read_combs(page, [label, stray], reads)
    assert [w.text for w in words] == ["Case", "U9186072"]
    combed = words[1]
    assert combed.confidence == 0.97
    assert combed.box[0][0] >= 600 and combed.box[1][0] <= 600 + 8 * _CELL + 2
    assert combed.box[0][1] > 80 and combed.box[2][1] < 80 + _CELL  # the ink, not the cells
    assert read_combs(page, [label, stray], lambda _: []) == [label, stray]


def test_the_engine_reads_comb_boxes_it_used_to_miss(ocr_engine: OcrEngine) -> None:
    """PP-OCRv6 itself finds no line in a row of boxes; with the comb rows read, each
    value is one word on its label's line."""
    page = _form([("Study ref.", ["R4-842-268"]), ("Birth date", ["21", "07", "1940"])])
    lines = [line.text for line in page_lines(ocr_engine.recognise(page, 0))]
    assert lines == ["Study ref. R4-842-268", "Birth date 21 07 1940"]
