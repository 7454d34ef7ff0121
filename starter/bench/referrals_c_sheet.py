"""The third referral generator's drawing surface and its own degradations.

A4 at 200 dpi in DejaVu's italic, oblique, light and condensed faces (the
only family installed; the other generators use its upright faces and
Pillow's own). Handwriting is imitated by a bold-italic face whose words sit
on an uneven baseline at slightly varying sizes. Degradations are drawn here
rather than taken from the OCR bench: a slight tilt, a soft focus, a hard
JPEG, and a fax's 1-bit page at half the vertical resolution.
"""

from __future__ import annotations

import io
import random
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFilter, ImageFont

WIDTH, HEIGHT = 1654, 2339  # A4 at 200 dpi
INK = 25
FACES = {
    "serif": "DejaVuSerif.ttf",
    "serif_bold": "DejaVuSerif-Bold.ttf",
    "italic": "DejaVuSerif-Italic.ttf",
    "hand": "DejaVuSerifCondensed-BoldItalic.ttf",
    "oblique": "DejaVuSans-Oblique.ttf",
    "light": "DejaVuSans-ExtraLight.ttf",
    "sans": "DejaVuSansCondensed.ttf",
    "sans_bold": "DejaVuSansCondensed-Bold.ttf",
    "mono": "DejaVuSansMono.ttf",
}
#: Degradations a page may get; ``None`` is a clean scan. The fax family is always 1-bit.
DEGRADATIONS = (None, None, "tilt", "blur", "jpeg", "tilt_jpeg")


@lru_cache(maxsize=64)
def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(FACES[face], size)


class Sheet:
    """One page: text in a face and size, boxes, shading, ticks and strike-throughs."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.image = Image.new("L", (WIDTH, HEIGHT), 252)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, x: int, y: int, s: str, size: int = 28, face: str = "serif") -> int:
        """Draw ``s`` at (x, y); the x where it ends."""
        self.draw.text((x, y), s, fill=INK, font=font(face, size))
        return int(x + self.draw.textlength(s, font=font(face, size)))

    def right(self, x_end: int, y: int, s: str, size: int = 28, face: str = "serif") -> None:
        self.text(int(x_end - self.draw.textlength(s, font=font(face, size))), y, s, size, face)

    def hand(self, x: int, y: int, s: str, size: int = 34) -> int:
        """Words as if written: each on its own baseline and size, a little apart."""
        for word in s.split():
            size_w = size + self.rng.randint(-3, 3)
            x = self.text(x, y + self.rng.randint(-6, 6), word, size_w, "hand")
            x += int(size * 0.35) + self.rng.randint(0, 6)
        return x

    def box(self, rect: tuple[int, int, int, int], width: int = 2, fill: int | None = None) -> None:
        self.draw.rectangle(rect, outline=INK, width=width, fill=fill)

    def shade(self, rect: tuple[int, int, int, int], grey: int = 215) -> None:
        self.draw.rectangle(rect, fill=grey)

    def check(self, x: int, y: int, ticked: bool, size: int = 30) -> None:
        """A square box at (x, y), ticked with a hand-drawn check or left empty."""
        self.box((x, y, x + size, y + size), 3)
        if ticked:
            pts = [(x + 5, y + size // 2), (x + size // 2 - 2, y + size - 5), (x + size + 6, y - 8)]
            self.draw.line(pts, fill=INK, width=5, joint="curve")

    def strike(self, x0: int, x1: int, y: int) -> None:
        """A pen line through a word: the option that does not apply."""
        self.draw.line((x0 - 4, y + self.rng.randint(-2, 2), x1 + 4, y), fill=INK, width=4)

    def dots(self, x0: int, x1: int, y: int) -> None:
        for x in range(x0, x1, 12):
            self.draw.point([(x, y), (x + 1, y)], fill=120)


def degrade(page: Image.Image, kind: str | None, rng: random.Random) -> Image.Image:
    """The page after the office: ``kind`` from ``DEGRADATIONS``, or "fax"."""
    if kind in ("tilt", "tilt_jpeg"):
        angle = rng.uniform(0.5, 1.6) * rng.choice((-1, 1))
        page = page.rotate(angle, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=250)
    if kind == "blur":
        page = page.filter(ImageFilter.GaussianBlur(rng.uniform(0.9, 1.4)))
    if kind in ("jpeg", "tilt_jpeg"):
        buffer = io.BytesIO()
        page.save(buffer, "JPEG", quality=rng.randint(22, 38))
        page = Image.open(io.BytesIO(buffer.getvalue())).convert("L")
    if kind == "fax":
        half = page.resize((WIDTH, HEIGHT // 2), Image.Resampling.BILINEAR)
        cut = rng.randint(150, 175)
        bits = half.point(lambda v: 255 if v > cut else 0).convert("1")
        page = bits.convert("L").resize((WIDTH, HEIGHT), Image.Resampling.NEAREST)
    return page
