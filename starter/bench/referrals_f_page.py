"""The sixth generator's page: print, box, grid, write by hand, tick; then age it.

A ``Page`` keeps every string it prints with its box (``printed``, ``boxes``),
so the tests can check each truth is on the page and no two strings overlap.
Printed strings shrink to fit the room they are given; handwritten ones are
drawn a glyph at a time, each slightly resized, raised or turned, in a pen's
ink. ``grid`` lays labelled values out in cells five ways (label above a
boxed value, beside it in a ruled table, above it on a card, on a writing
line, or run in "Label: value"). ``finish`` scans, copies or faxes the page.
Fonts are the DejaVu families this box has (their obliques stand for a hand).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFilter, ImageFont

Box = tuple[int, int, int, int]
Ink = tuple[int, int, int]
INK: Ink = (22, 22, 22)
GREY: Ink = (95, 95, 95)
#: Ballpoint blues and a black felt tip.
PENS: tuple[Ink, ...] = ((28, 42, 128), (18, 58, 150), (35, 35, 40))
HANDS = ("Sans-Oblique", "SansCondensed-Oblique", "Serif-Italic", "SerifCondensed-Italic")


@lru_cache(maxsize=256)
def face(style: str, size: int) -> ImageFont.FreeTypeFont:
    """A DejaVu face by its file's name after "DejaVu" ("Sans-Bold", "Serif-Italic")."""
    return ImageFont.truetype(f"/usr/share/fonts/truetype/dejavu/DejaVu{style}.ttf", size)


class Page:
    """One page at 200 dpi, A4 unless ``height`` says; with ``hand`` (its jitter), values
    are written in ``script`` with ``pen``, not printed."""

    width = 1654

    def __init__(self, height: int = 2339, hand: random.Random | None = None,
                 pen: Ink = INK, script: str = "Sans-Oblique") -> None:  # fmt: skip
        self.height, self.hand, self.pen, self.script = height, hand, pen, script
        self.image = Image.new("RGB", (self.width, height), (255, 255, 255))
        self.draw = ImageDraw.Draw(self.image)
        #: Every string drawn, and its box.
        self.printed: list[str] = []
        self.boxes: list[Box] = []

    def put(self, x: int, y: int, s: str, size: int = 26, style: str = "Sans",
            fill: Ink = INK, room: int = 0) -> Box:  # fmt: skip
        """``s`` printed from (x, y), shrunk until it is at most ``room`` wide (0: any)."""
        while room and size > 11 and face(style, size).getlength(s) > room:
            size -= 1
        left, top, right, bottom = self.draw.textbbox((x, y), s, font=face(style, size))
        self.draw.text((x, y), s, fill=fill, font=face(style, size))
        return self._keep(s, (int(left), int(top), int(right), int(bottom)))

    def flush(self, x1: int, y: int, s: str, size: int = 26, style: str = "Sans") -> Box:
        """``s`` printed to end at ``x1``."""
        return self.put(x1 - int(face(style, size).getlength(s)), y, s, size, style)

    def lines(self, x: int, y: int, width: int, s: str, size: int = 28,
              style: str = "Serif", lead: float = 1.5) -> int:  # fmt: skip
        """``s`` wrapped to ``width``; the y of the line after it."""
        words, line = s.split(), ""
        for word in words:
            if line and face(style, size).getlength(f"{line} {word}") > width:
                self.put(x, y, line, size, style)
                y, line = y + int(size * lead), word
            else:
                line = f"{line} {word}".strip()
        if line:
            self.put(x, y, line, size, style)
        return y + int(size * lead)

    def value(self, x: int, y: int, s: str, size: int = 28, room: int = 0) -> Box:
        """A filled-in value: printed, or written by hand on a handwritten page."""
        if self.hand is None:
            return self.put(x, y, s, size, "Sans", INK, room)
        return self.write(x, y, s, size + 4, room)

    def write(self, x: int, y: int, s: str, size: int = 34, room: int = 0) -> Box:
        """``s`` in the page's hand: a glyph at a time, each a little off its neighbours."""
        rng, at = self.hand or random.Random(s), float(x)
        while room and size > 14 and face(self.script, size).getlength(s) * 1.1 > room:
            size -= 1
        x0, y0, x1, y1 = x, y + size, x, y
        for char in s:
            chosen = face(self.script, max(12, size + rng.randint(-2, 2)))
            step = chosen.getlength(char) * rng.uniform(0.94, 1.06)
            if not char.isspace():
                glyph = Image.new("L", (size * 2, size * 2), 0)
                ImageDraw.Draw(glyph).text((size // 2, size // 3), char, 255, font=chosen)
                glyph = glyph.rotate(rng.uniform(-6, 6), Image.Resampling.BILINEAR)
                lift = rng.randint(-3, 3)
                corner = (int(at) - size // 2, y - size // 3 + lift)
                self.image.paste(
                    self.pen, (*corner, corner[0] + size * 2, corner[1] + size * 2), glyph
                )
                ink = glyph.getbbox() or (0, 0, 0, 0)
                y0, y1 = min(y0, corner[1] + ink[1]), max(y1, corner[1] + ink[3])
                x0, x1 = min(x0, corner[0] + ink[0]), max(x1, corner[0] + ink[2])
            at += step
        return self._keep(s, (x0, y0, int(x1), y1))

    def frame(self, box: Box, width: int = 2, shade: Ink | None = None) -> None:
        self.draw.rectangle(box, outline=INK, width=width, fill=shade)

    def tick(self, box: Box, how: str = "tick") -> None:
        """A tick or cross in ``box``, or a ring round it ("ring"): by hand if the page has one."""
        x0, y0, x1, y1 = box
        wobble = (self.hand or random.Random(0)).randint
        ink, width = (self.pen, 4) if self.hand else (INK, 5)
        if how == "ring":
            self.draw.ellipse((x0 - 16, y0 - 12, x1 + 16, y1 + 12), outline=ink, width=3)
        elif how == "cross":
            self.draw.line([(x0 + 4, y0 + 4), (x1 - 4 + wobble(-2, 2), y1 - 4)], ink, width)
            self.draw.line([(x0 + 4, y1 - 4), (x1 - 4, y0 + 4 + wobble(-2, 2))], ink, width)
        else:
            mid = ((x0 + x1) // 2, y1 - 4 + wobble(-2, 2))
            self.draw.line([(x0 + 4, (y0 + y1) // 2), mid, (x1 + 8, y0 - 10)], ink, width)

    def _keep(self, s: str, box: Box) -> Box:
        self.printed.append(s)
        self.boxes.append(box)
        return box


@dataclass(frozen=True)
class Grid:
    """Cells of labelled values across ``width`` from ``x``: ``how`` they are laid out
    ("boxed", "table", "card", "line" or "run"), ``cols`` a row, ``row`` pixels high."""

    x: int
    width: int
    how: str
    cols: int = 2
    row: int = 96
    label: int = 20
    size: int = 28


def grid(page: Page, y: int, g: Grid, cells: list[tuple[str, str, int]]) -> int:
    """``cells`` (label, value, columns spanned) laid out row by row from ``y``; the y below."""
    col, unit = 0, g.width // g.cols
    for label, value, span in cells:
        span = min(span, g.cols)
        if col + span > g.cols:
            col, y = 0, y + g.row
        _cell(page, (g.x + col * unit, y, g.x + (col + span) * unit, y + g.row), g, label, value)
        col += span
    return y + g.row


def _cell(page: Page, box: Box, g: Grid, label: str, value: str) -> None:
    x0, y0, x1, y1 = box
    if g.how == "table":  # label in its own ruled column, value beside it
        split = x0 + (x1 - x0) * 2 // 5 if x1 - x0 < g.width else x0 + (x1 - x0) // 5
        page.frame((x0, y0, x1, y1), 1)
        page.draw.line([(split, y0), (split, y1)], INK, 1)
        page.put(x0 + 10, y0 + 12, label, g.label, "SansCondensed-Bold", INK, split - x0 - 20)
        page.value(split + 12, y0 + 12, value, g.size, x1 - split - 24)
    elif g.how == "run":  # "Label: value" on one line
        said = label if label.endswith(("?", ":")) else f"{label}:"
        left = page.put(x0, y0 + 8, said, g.label + 4, "Sans-Bold", INK, (x1 - x0) // 2)[2]
        page.value(left + 14, y0 + 8, value, g.size, x1 - left - 30)
    elif g.how == "line":  # a printed label, a rule to write on
        left = page.put(x0, y0 + 40, label, g.label, "Sans", INK, (x1 - x0) // 3)[2]
        page.draw.line([(left + 10, y0 + g.row - 22), (x1 - 24, y0 + g.row - 22)], GREY, 2)
        page.value(left + 22, y0 + 14, value, g.size, x1 - left - 60)
    else:  # "boxed": label over a value box; "card": a hairline cell, label atop
        inset = 6 if g.how == "boxed" else 0
        page.put(x0 + 8, y0 + 4, label, g.label, "Sans", GREY, x1 - x0 - 16)
        page.frame((x0 + inset, y0 + g.label + 10, x1 - inset, y1 - inset), 2 if inset else 1)
        page.value(x0 + 16, y0 + g.label + 18, value, g.size, x1 - x0 - 32)


AGEING = ("clean", "scanned", "copied", "skewed")


def finish(page: Page, ageing: str, rng: random.Random) -> Image.Image:
    """The page as it reaches the intake: clean, scanned, copied, skewed, or faxed."""
    image = page.image
    if ageing == "faxed":
        grey = image.convert("L").resize((page.width, page.height // 2), Image.Resampling.BOX)
        image = grey.resize((page.width, page.height)).point(lambda v: 255 if v > 140 else 0)
        _dots(image, rng, 700, 0)
    elif ageing == "scanned":
        image = image.point(lambda v: 30 + int(v * 0.86))
        shadow = ImageDraw.Draw(image)
        for n in range(26):  # the lid's shadow down one edge
            shadow.line([(n, 0), (n, page.height)], fill=(120 + n * 5,) * 3)
        _dots(image, rng, 400, (70, 70, 70))
    elif ageing == "copied":
        image = image.filter(ImageFilter.GaussianBlur(0.9)).point(lambda v: min(255, v + 12))
    if ageing != "clean":
        turn = rng.uniform(0.3, 1.6) * rng.choice((-1, 1))
        image = image.rotate(
            turn, Image.Resampling.BICUBIC, fillcolor=255 if image.mode == "L" else (255,) * 3
        )
    return image.convert("RGB")


def _dots(image: Image.Image, rng: random.Random, count: int, ink: int | Ink) -> None:
    draw = ImageDraw.Draw(image)
    for _ in range(count):
        x, y = rng.randrange(image.width), rng.randrange(image.height)
        draw.rectangle((x, y, x + rng.randint(0, 2), y + rng.randint(0, 1)), fill=ink)
