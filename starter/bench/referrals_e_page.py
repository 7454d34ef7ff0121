"""The fifth generator's page: a canvas that remembers what it prints, and how it ages.

A ``Sheet`` draws text (wrapped or not), boxes, comb fields (one character per
box), marks (a tick, a cross, a ring round a word) and keeps every string it
printed with its box, so the tests can check that each truth is on the page
and nothing overlaps. ``finish`` tilts a page by up to two degrees and may
fax it (halved vertical resolution, hard threshold, speckle) or photocopy it
(grey cast, blur, toner streak). Fonts are the DejaVu families this box has.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFilter, ImageFont

_FONTS = {
    "sans": "DejaVuSans.ttf", "sans_bold": "DejaVuSans-Bold.ttf",
    "serif": "DejaVuSerif.ttf", "serif_bold": "DejaVuSerif-Bold.ttf",
    "cond": "DejaVuSansCondensed.ttf", "cond_bold": "DejaVuSansCondensed-Bold.ttf",
    "mono": "DejaVuSansMono.ttf", "light": "DejaVuSans-ExtraLight.ttf",
    "italic": "DejaVuSerif-Italic.ttf",
}  # fmt: skip
AGEING = ("none", "fax", "photocopy", "tilt")
Box = tuple[int, int, int, int]


@lru_cache(maxsize=64)
def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(f"/usr/share/fonts/truetype/dejavu/{_FONTS[face]}", size)


@dataclass
class Sheet:
    """One page being drawn at 200 dpi; ``printed`` and ``boxes`` hold every string drawn."""

    width: int = 1654
    height: int = 2339
    face: str = "sans"
    printed: list[str] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.image = Image.new("L", (self.width, self.height), 255)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, x: int, y: int, s: str, size: int = 30, face: str | None = None) -> Box:
        """``s`` at (x, y); its box."""
        chosen = font(face or self.face, size)
        box = self.draw.textbbox((x, y), s, font=chosen)
        self.draw.text((x, y), s, fill=0, font=chosen)
        self.printed.append(s)
        self.boxes.append((int(box[0]), int(box[1]), int(box[2]), int(box[3])))
        return self.boxes[-1]

    def wrap(self, x: int, y: int, width: int, s: str, size: int = 30, gap: int = 10) -> int:
        """``s`` wrapped to ``width`` pixels from (x, y); the y below its last line."""
        chosen, line = font(self.face, size), ""
        for word in s.split():
            trial = f"{line} {word}".strip()
            if line and chosen.getlength(trial) > width:
                y = self.text(x, y, line, size)[3] + gap
                trial = word
            line = trial
        return self.text(x, y, line, size)[3] + gap if line else y

    def rect(self, box: Box, width: int = 2) -> None:
        self.draw.rectangle(box, outline=0, width=width)

    def comb(self, x: int, y: int, chars: str, cell: int = 44, size: int = 30) -> Box:
        """``chars`` one to a box (a space leaves a wider gap, as forms group digits)."""
        left = x
        for char in chars:
            if char == " ":
                x += cell // 2
                continue
            self.rect((x, y, x + cell, y + cell + 8))
            self.draw.text((x + cell // 2, y + cell // 2 + 4), char, 0, font(self.face, size), "mm")
            x += cell
        self.printed.append(chars)
        self.boxes.append((left, y, x, y + cell + 8))
        return self.boxes[-1]

    def mark(self, box: Box, how: str) -> None:
        """A tick or a cross in ``box``, or a ring round it ("ring")."""
        x0, y0, x1, y1 = box
        if how == "ring":
            self.draw.ellipse((x0 - 14, y0 - 10, x1 + 14, y1 + 10), outline=0, width=3)
        elif how == "tick":
            self.draw.line([(x0 + 6, (y0 + y1) // 2), ((x0 + x1) // 2, y1 - 5), (x1 + 6, y0 - 8)],
                           fill=0, width=5)  # fmt: skip
        else:
            self.draw.line([(x0 + 5, y0 + 5), (x1 - 5, y1 - 5)], fill=0, width=4)
            self.draw.line([(x0 + 5, y1 - 5), (x1 - 5, y0 + 5)], fill=0, width=4)


def finish(sheet: Sheet, ageing: str, rng: random.Random, banner: str) -> Image.Image:
    """The drawn page as it arrives: tilted, faxed or photocopied (or clean)."""
    image = sheet.image
    if ageing == "fax":
        band = Image.new("L", (sheet.width, 40), 255)
        ImageDraw.Draw(band).text((30, 8), banner, fill=0, font=font("mono", 22))
        image = image.copy()
        image.paste(band, (0, 0))
        image = image.resize((sheet.width, sheet.height // 2)).resize((sheet.width, sheet.height))
        image = image.point(lambda v: 0 if v < 150 else 255)
        _speckle(image, rng, 900)
    elif ageing == "photocopy":
        image = image.filter(ImageFilter.GaussianBlur(1.1)).point(lambda v: 40 + v * 0.78)
        x = rng.randint(200, sheet.width - 200)
        ImageDraw.Draw(image).line([(x, 0), (x + 6, sheet.height)], fill=190, width=3)
    if ageing in ("tilt", "fax", "photocopy"):
        angle = rng.uniform(0.4, 2.0) * rng.choice((-1, 1))
        image = image.rotate(angle, resample=Image.Resampling.BILINEAR, fillcolor=255)
    return image.convert("RGB")


def _speckle(image: Image.Image, rng: random.Random, count: int) -> None:
    draw = ImageDraw.Draw(image)
    for _ in range(count):
        x, y = rng.randrange(image.width), rng.randrange(image.height)
        draw.point((x, y), fill=0)
