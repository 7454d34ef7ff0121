"""The watermark drawn on a released page: two bands around the scan and a diagonal across it.

The top band holds the release id and its check code in large monospace (what
:func:`activities.egress.readback.read_visible_mark` reads back from a
printed-and-rescanned copy) over :meth:`ReleaseMark.text`; the bottom band
repeats that line with the check code and page number. The bands are added
above and below, so the mark never covers content. A light diagonal repeat of
recipient and release id crosses the content itself, drawn with "darker", so it
never lightens a pixel of the page. Fonts are DejaVu, found on the system or in
matplotlib's copy, else Pillow's built-in font.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFont

from activities.egress.pdfmeta import ReleaseMark
from activities.pages.raster import GrayPage
from custody.errors import RenderFailed
from custody.models import PageText, Word


class Stamp:
    """The watermark for one mark at one resolution, drawn onto page after page."""

    def __init__(self, mark: ReleaseMark, dpi: int) -> None:
        if not 50 <= dpi <= 1200:
            raise RenderFailed("dpi out of range")
        self.mark, self.dpi, self.px = mark, dpi, dpi / 72  # px: pixels per point
        self._margin = round(0.1 * dpi)
        # Pillow font objects are not shared between threads: each stamp has its own.
        self._fonts: dict[tuple[str, int], _Font] = {}
        self._layers: dict[tuple[int, int], Image.Image] = {}
        self._tile = self._make_tile()

    def page(self, image: GrayPage, text: PageText, number: int) -> tuple[Image.Image, PageText]:
        """Page ``number`` stamped, and its words moved down with the scan under the band."""
        stamped, top = self._draw(image, number)
        words = [_shift(word, top) for word in text.words]
        moved = text.model_copy(update={"words": words, "height": stamped.height})
        return stamped, moved

    def image(self, image: GrayPage, number: int) -> Image.Image:
        """Page ``number`` stamped, without words (a page image file)."""
        return self._draw(image, number)[0]

    def _draw(self, image: GrayPage, number: int) -> tuple[Image.Image, int]:
        if image.ndim != 2 or image.dtype != np.uint8 or 0 in image.shape:
            raise RenderFailed(f"page {number} is not an 8-bit grayscale image")
        height, width = image.shape
        content = ImageChops.darker(Image.fromarray(image), self._diagonal(width, height))
        head = self.head(width)
        foot_line = f"{self.mark.text()} {self.mark.check_code()} · page {number}"
        foot = self._band(width, [(foot_line, _SANS, 7, 6)])
        canvas = Image.new("L", (width, head.height + height + foot.height), 255)
        for band, top in ((head, 0), (content, head.height), (foot, head.height + height)):
            canvas.paste(band, (0, top))
        rule = max(1, round(self.px / 2))
        ImageDraw.Draw(canvas).line(
            [(0, head.height - rule), (width, head.height - rule)], 128, rule
        )
        return canvas, head.height

    def head(self, width: int) -> Image.Image:
        """The top band: the id and check code, then the policy's line."""
        return self._band(width, [*self._id_lines(width), (self.mark.text(), _SANS, 8, 6)])

    def _id_lines(self, width: int) -> list[_Line]:
        # On narrow pages (receipts) the check code takes a line of its own, so
        # the id keeps a size Tesseract can read after print and scan.
        line = f"{self.mark.release_id}  {self.mark.check_code()}"
        if self._font(_MONO, round(16 * self.px)).getlength(line) <= width - 2 * self._margin:
            return [(line, _MONO, 16, 16)]
        return [(self.mark.release_id, _MONO, 16, 11), (self.mark.check_code(), _MONO, 16, 16)]

    def _band(self, width: int, lines: list[_Line]) -> Image.Image:
        inner, gap = width - 2 * self._margin, self._margin // 2
        rows: list[tuple[str, _Font]] = []
        for text, name, points, floor in lines:
            font = self._fit(text, name, points, floor, inner)
            rows += [(part, font) for part in _wrap(text, font, inner)]
        heights = [_height(font) for _, font in rows]
        height = sum(heights) + gap * (len(rows) - 1) + 2 * self._margin
        band = Image.new("L", (width, height), 255)
        draw, y = ImageDraw.Draw(band), self._margin
        for (text, font), row_height in zip(rows, heights, strict=True):
            draw.text((self._margin, y), text, 0, font)
            y += row_height + gap
        return band

    def _diagonal(self, width: int, height: int) -> Image.Image:
        key = (width, height)
        if key not in self._layers:
            self._layers[key] = _tiled(self._tile, width, height)
        return self._layers[key]

    def _make_tile(self) -> Image.Image:
        text = f"{self.mark.recipient} · {self.mark.release_id}"
        font = self._font(_SANS, round(14 * self.px))
        left, top, right, bottom = (int(v) for v in font.getbbox(text))
        tile = Image.new("L", (right - left + 4, bottom - top + 4), 255)
        draw = ImageDraw.Draw(tile)
        # Two values, grey and paper, no anti-aliasing: a third fewer bytes stored
        # in 16 levels. The bands keep theirs: Tesseract reads them back better so.
        draw.fontmode = "1"
        draw.text((2 - left, 2 - top), text, _DIAGONAL_GRAY, font)
        return tile.rotate(30, Image.Resampling.NEAREST, expand=True, fillcolor=255)

    def _fit(self, text: str, name: str, points: float, floor: float, width: int) -> _Font:
        # Shrink to the page's width (receipts are narrow) down to a legible
        # floor; _wrap breaks what is still too wide.
        size, smallest = round(points * self.px), round(floor * self.px)
        while size > smallest and self._font(name, size).getlength(text) > width:
            size = max(smallest, int(size * 0.9))
        return self._font(name, size)

    def _font(self, name: str, size: int) -> _Font:
        if (name, size) not in self._fonts:
            path = _font_path(name)
            font = ImageFont.truetype(path, size) if path else ImageFont.load_default(size)
            self._fonts[name, size] = font
        return self._fonts[name, size]


_MONO, _SANS = "DejaVuSansMono-Bold.ttf", "DejaVuSans.ttf"
_DIAGONAL_GRAY = 200
_Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
_Line = tuple[str, str, float, float]  # text, font file, points, smallest points


def _wrap(text: str, font: _Font, width: int) -> list[str]:
    """Greedy line breaks at spaces; a word wider than the line is cut anywhere."""
    rows = [""]
    for word in text.split(" "):
        joined = f"{rows[-1]} {word}" if rows[-1] else word
        if font.getlength(joined) <= width:
            rows[-1] = joined
            continue
        rows.append("")
        for char in word:
            if rows[-1] and font.getlength(rows[-1] + char) > width:
                rows.append("")
            rows[-1] += char
    return [row for row in rows if row]


def _tiled(tile: Image.Image, width: int, height: int) -> Image.Image:
    layer = Image.new("L", (width, height), 255)
    step_x, step_y = tile.width + tile.width // 3, tile.height + tile.height // 4
    for row, y in enumerate(range(-tile.height // 2, height, step_y)):
        for x in range(-(row % 2) * step_x // 2, width, step_x):
            layer.paste(tile, (x, y))
    return layer


def _shift(word: Word, dy: int) -> Word:
    return word.model_copy(update={"box": [[x, y + dy] for x, y in word.box]})


def _height(font: _Font) -> int:
    return int(font.getbbox("Mg|")[3])


@lru_cache(maxsize=4)
def _font_path(name: str) -> str | None:
    # Debian's fonts-dejavu-core, else the copy matplotlib (a dependency) ships.
    folders = [Path("/usr/share/fonts/truetype/dejavu")]
    spec = find_spec("matplotlib")
    if spec is not None and spec.origin is not None:
        folders.append(Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf")
    return next((str(f / name) for f in folders if (f / name).is_file()), None)
