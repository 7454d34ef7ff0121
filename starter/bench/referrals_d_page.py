"""The fourth referral generator's page: colour, wrapped text, tables, boxes, and the office.

Pages are RGB (a coloured letterhead band, blue or black ink) at 200 dpi, A4
or US Letter, in DejaVu's condensed serif, book sans, bold mono and condensed
oblique faces at a size drawn per document. The degradations are this
generator's own: a skew of up to two degrees with the page cut at its edges,
a dusty grey scan with sensor noise, a photocopy's dark edges and toner
specks, and a fax sent 1-bit with streaks and its transmission header line.
"""

from __future__ import annotations

import random
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

A4, LETTER = (1654, 2339), (1700, 2200)
FACES = {
    "serif": "DejaVuSerifCondensed.ttf",
    "serif_bold": "DejaVuSerifCondensed-Bold.ttf",
    "serif_italic": "DejaVuSerifCondensed-Italic.ttf",
    "sans": "DejaVuSans.ttf",
    "sans_bold": "DejaVuSans-Bold.ttf",
    "mono": "DejaVuSansMono-Bold.ttf",
    "oblique": "DejaVuSansCondensed-Oblique.ttf",
}
INKS = ((20, 20, 24), (18, 32, 92), (40, 40, 40))
#: What the office did to the page; ``None`` is a clean print.
DEGRADATIONS = (None, None, "skew", "speckle", "photocopy", "fax", "skew_speckle")
Rect = tuple[int, int, int, int]


@lru_cache(maxsize=128)
def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(FACES[face], size)


class Page:
    """One page: text in a face, wrapped paragraphs, rules, boxes, ticks and tables."""

    def __init__(self, rng: random.Random, size: tuple[int, int] = A4, face: str = "serif") -> None:
        self.rng, self.face = rng, face
        self.width, self.height = size
        self.ink = rng.choice(INKS)
        self.scale = rng.uniform(0.9, 1.15)  # one type size per document
        self.image = Image.new("RGB", size, (255, 255, 253))
        self.draw = ImageDraw.Draw(self.image)
        #: Every string drawn, whole (a wrapped paragraph as one): what the page says.
        self.printed: list[str] = []
        #: Where each string was drawn (left, top, right, bottom).
        self.boxes: list[Rect] = []

    def px(self, points: float) -> int:
        """A type size in pixels for ``points`` at this document's scale."""
        return max(14, round(points * 2.78 * self.scale))

    def length(self, s: str, size: int, face: str | None = None) -> int:
        return int(self.draw.textlength(s, font=font(face or self.face, size)))

    def text(
        self, x: int, y: int, s: str, size: int, face: str | None = None, fill: object = None
    ) -> int:
        """Draw ``s`` at (x, y); the x where it ends."""
        ink = fill if fill is not None else self.ink
        self.printed.append(s)
        self.boxes.append(self.draw.textbbox((x, y), s, font=font(face or self.face, size)))  # type: ignore[arg-type]
        self.draw.text((x, y), s, fill=ink, font=font(face or self.face, size))  # type: ignore[arg-type]
        return x + self.length(s, size, face)

    def wrap(self, x: int, y: int, width: int, s: str, size: int, face: str | None = None) -> int:
        """``s`` wrapped into ``width``; the y below its last line."""
        lines = [""]
        for word in s.split():
            trial = f"{lines[-1]} {word}".strip()
            if lines[-1] and self.length(trial, size, face) > width:
                lines.append(word)
            else:
                lines[-1] = trial
        before = len(self.printed)
        for line in lines:
            self.text(x, y, line, size, face)
            y += int(size * 1.45)
        self.printed[before:] = [s]  # the paragraph whole, as a reader would quote it
        return y

    def rule(self, x0: int, x1: int, y: int, width: int = 2) -> None:
        self.draw.line((x0, y, x1, y), fill=self.ink, width=width)

    def box(self, rect: Rect, width: int = 2, fill: tuple[int, int, int] | None = None) -> None:
        self.draw.rectangle(rect, outline=self.ink, width=width, fill=fill)

    def band(self, rect: Rect, colour: tuple[int, int, int]) -> None:
        self.draw.rectangle(rect, fill=colour)

    def checkbox(self, x: int, y: int, size: int, ticked: bool, mark: str = "x") -> None:
        """A box, marked with an X, a tick or filled in when ``ticked``."""
        self.box((x, y, x + size, y + size), 2)
        if not ticked:
            return
        pen, near = max(3, size // 8), size // 5
        far = size - near
        if mark == "x":
            self.draw.line((x + near, y + near, x + far, y + far), self.ink, pen)
            self.draw.line((x + near, y + far, x + far, y + near), self.ink, pen)
        elif mark == "tick":
            pts = [(x + near, y + size // 2), (x + size // 2, y + far), (x + size, y - 4)]
            self.draw.line(pts, fill=self.ink, width=pen)
        else:
            self.draw.rectangle((x + near, y + near, x + far, y + far), self.ink)

    def table(self, x: int, y: int, widths: list[int], rows: list[list[str]], size: int) -> int:
        """A ruled table, its first row a bold header; the y below it."""
        height = int(size * 1.9)
        right = x + sum(widths)
        for n, row in enumerate(rows):
            self.rule(x, right, y, 2)
            cx = x
            for width, cell in zip(widths, row, strict=True):
                face = "sans_bold" if n == 0 else None
                self.text(cx + 10, y + (height - size) // 2, cell, size, face)
                cx += width
            y += height
        self.rule(x, right, y, 2)
        edges = [x, *(x + sum(widths[: i + 1]) for i in range(len(widths)))]
        for cx in edges:
            self.draw.line((cx, y - height * len(rows), cx, y), fill=self.ink, width=2)
        return y


def degrade(page: Image.Image, kind: str | None, rng: random.Random, header: str) -> Image.Image:
    """The page after ``kind`` (from ``DEGRADATIONS``); a fax prints ``header`` at its top."""
    if kind in ("skew", "skew_speckle"):
        angle = rng.uniform(0.7, 2.2) * rng.choice((-1, 1))
        page = page.rotate(angle, Image.Resampling.BILINEAR, expand=False, fillcolor=(250,) * 3)
    if kind in ("speckle", "skew_speckle"):
        page = _noisy(page.convert("L").filter(ImageFilter.GaussianBlur(0.7)), rng, 14.0, 0.0006)
    if kind == "photocopy":
        page = _photocopy(page.convert("L"), rng)
    if kind == "fax":
        page = _fax(page, rng, header)
    return page


def _noisy(page: Image.Image, rng: random.Random, sigma: float, dust: float) -> Image.Image:
    gen = np.random.default_rng(rng.getrandbits(32))
    grey = np.asarray(page, dtype=np.float32) * 0.92 + 8
    grey += gen.normal(0.0, sigma, grey.shape)
    grey[gen.random(grey.shape) < dust] = 30  # dust on the glass
    return Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8))


def _photocopy(page: Image.Image, rng: random.Random) -> Image.Image:
    gen = np.random.default_rng(rng.getrandbits(32))
    grey = np.asarray(page, dtype=np.float32)
    grey = np.clip((grey - 40) * 1.25, 0, 255)  # copied darker than printed
    h, w = grey.shape
    edge = rng.randint(18, 40)  # the lid left open: dark margins
    for sl in (np.s_[:, :edge], np.s_[:, w - edge :], np.s_[:edge, :]):
        grey[sl] *= 0.35
    grey[gen.random(grey.shape) < 0.0004] = 0
    return Image.fromarray(grey.astype(np.uint8))


def _fax(page: Image.Image, rng: random.Random, header: str) -> Image.Image:
    draw = ImageDraw.Draw(page)
    draw.text((60, 18), header, fill=(0, 0, 0), font=font("mono", 24))
    grey = page.convert("L")
    cut = rng.randint(140, 170)
    bits = np.asarray(grey) > cut
    gen = np.random.default_rng(rng.getrandbits(32))
    for row in gen.integers(60, bits.shape[0] - 10, size=rng.randint(2, 6)):
        bits[row, :] = True  # a line the modem dropped
    bits &= gen.random(bits.shape) > 0.0015
    return Image.fromarray((bits * 255).astype(np.uint8))
