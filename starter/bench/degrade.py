"""Degraded variants of corpus pages, seeded: what scans look like after the office.

The seed articles name skewed pages (+-5 degrees), low contrast, JPEG at low
quality, 1-bit fax, stamps and handwriting. Each kind here turns one 8-bit
page into its degraded twin, drawn from a generator seeded by
``(seed, kind, key)``, so one run's pages are the next run's pages bit for bit.

The ground truth stays the page's own, with one exception: a stamp's words
are added to it, because the corpus's annotators transcribed stamps (FUNSD,
MANIFEST.md), and a reader that misses a "RECEIVED" stamp misses a search
hit. Handwriting is drawn as marks with no words (ticks, circles, underlines,
a signature scribble): a synthetic hand cannot be given an honest transcript,
so that class measures what annotations cost the printed words under and
beside them, and phantom words read out of them count against precision.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from activities.pages.raster import GrayPage
from starter.bench import DEGRADATIONS

#: The degraded classes, in report order.
KINDS = DEGRADATIONS
MAX_SKEW_DEG = 5.0
_STAMP_WORDS = ("RECEIVED", "APPROVED", "PAID", "COPY", "FILED")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_INKS = ((200, 30, 40), (40, 60, 190), (120, 40, 150))  # red, blue, violet stamp pads


@dataclass(frozen=True)
class Degraded:
    image: GrayPage
    extra_truth: str  # words the degradation added to the page (a stamp's), else ""
    detail: dict[str, float | str]  # what was drawn: angle, quality, ... (numbers, no text)


def degrade(image: GrayPage, kind: str, seed: int, key: str) -> Degraded:
    """``image`` degraded as ``kind``; the same (seed, kind, key) gives the same pixels."""
    digest = hashlib.sha256(f"{seed}:{kind}:{key}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    return _KINDS[kind](image, rng)


def skew(image: GrayPage, rng: np.random.Generator) -> Degraded:
    # At least 1 degree, so every page of the class is measurably skewed.
    angle = float(rng.uniform(1.0, MAX_SKEW_DEG) * rng.choice((-1.0, 1.0)))
    return Degraded(rotate(image, angle), "", {"angle_deg": round(angle, 3)})


def rotate(image: GrayPage, angle: float) -> GrayPage:
    """Counter-clockwise by ``angle`` degrees on a canvas grown to fit, paper white."""
    page = Image.fromarray(image).rotate(
        angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255
    )
    return np.asarray(page, dtype=np.uint8)


def low_contrast(image: GrayPage, rng: np.random.Generator) -> Degraded:
    # Faded toner on grey paper: ink no darker than ~110-140, paper ~200-225.
    ink, paper = float(rng.uniform(110, 140)), float(rng.uniform(200, 225))
    faded = ink + image.astype(np.float32) * ((paper - ink) / 255.0)
    faded += rng.normal(0.0, 3.0, image.shape)  # sensor noise, now a visible share of the range
    return Degraded(_u8(faded), "", {"ink": round(ink, 1), "paper": round(paper, 1)})


def jpeg(image: GrayPage, rng: np.random.Generator) -> Degraded:
    quality = int(rng.integers(8, 16))  # blocky, ringing round every stroke
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=quality)
    decoded = np.asarray(Image.open(buf).convert("L"), dtype=np.uint8)
    return Degraded(decoded, "", {"quality": quality})


def fax(image: GrayPage, rng: np.random.Generator) -> Degraded:
    """Standard-mode fax: 204 x 98 dpi, 1 bit, Floyd-Steinberg dithered, printed back.

    The page's dpi is not known from its pixels: it is taken as a letter page's
    long side (11 in), so a ~100-dpi FUNSD form keeps its (already fax-like)
    resolution and a 300-dpi page loses most of it. Occasional line dropouts
    stand for the phone line.
    """
    dpi = max(image.shape) / 11.0
    height, width = image.shape
    size = (max(1, round(width * min(1.0, 204 / dpi))), max(1, round(height * min(1.0, 98 / dpi))))
    page = Image.fromarray(image).resize(size, Image.Resampling.BOX)
    bits = np.asarray(page.convert("1", dither=Image.Dither.FLOYDSTEINBERG).convert("L")).copy()
    dropped = rng.random(bits.shape[0]) < 0.004
    bits[dropped] = 255
    back = Image.fromarray(bits).resize((width, height), Image.Resampling.NEAREST)
    return Degraded(np.asarray(back, dtype=np.uint8), "", {"dpi_guess": round(dpi, 1)})


def stamp(image: GrayPage, rng: np.random.Generator) -> Degraded:
    """An inked rubber stamp, tilted, over the densest of a few candidate spots."""
    word = str(rng.choice(_STAMP_WORDS))
    date = f"{rng.choice(_MONTHS)} {int(rng.integers(1, 29))} {int(rng.integers(1990, 2027))}"
    height, width = image.shape
    font = ImageFont.load_default(size=max(12, min(height, width) // 22))
    mark = _stamp_mark(word, date, font)
    mark = mark.rotate(float(rng.uniform(-10, 10)), expand=True, fillcolor=0)
    x, y = _densest(image, mark.size, rng)
    alpha = np.zeros(image.shape, np.float32)
    tile = np.asarray(mark, np.float32)[: height - y, : width - x] / 255.0
    alpha[y : y + tile.shape[0], x : x + tile.shape[1]] = tile * 0.8
    ink = np.array(_INKS[int(rng.integers(len(_INKS)))], np.float32)
    rgb = np.repeat(image[..., None].astype(np.float32), 3, axis=2)
    rgb = rgb * (1 - alpha[..., None]) + (rgb * ink / 255.0) * alpha[..., None]  # ink multiplies
    gray = Image.fromarray(_u8(rgb)).convert("L")  # the raster step hands engines grey pages
    return Degraded(np.asarray(gray, dtype=np.uint8), f"{word} {date}", {"x": x, "y": y})


def _stamp_mark(
    word: str, date: str, font: ImageFont.ImageFont | ImageFont.FreeTypeFont
) -> Image.Image:
    size = int(getattr(font, "size", 12))
    text_w = max(int(font.getlength(word)), int(font.getlength(date)))
    pad = size // 2
    mark = Image.new("L", (text_w + 2 * pad, 2 * size + 3 * pad), 0)
    draw = ImageDraw.Draw(mark)
    draw.rounded_rectangle(
        (1, 1, mark.width - 2, mark.height - 2), radius=pad, outline=255, width=3
    )
    draw.text((pad, pad), word, fill=255, font=font)
    draw.text((pad, size + 2 * pad), date, fill=255, font=font)
    return mark


def _densest(image: GrayPage, size: tuple[int, int], rng: np.random.Generator) -> tuple[int, int]:
    """Of eight seeded spots, the one whose patch holds the most ink: a stamp over text."""
    height, width = image.shape
    w, h = min(size[0], width), min(size[1], height)
    spots = [
        (int(rng.integers(0, width - w + 1)), int(rng.integers(0, height - h + 1)))
        for _ in range(8)
    ]
    return max(spots, key=lambda s: int((image[s[1] : s[1] + h, s[0] : s[0] + w] < 128).sum()))


def handwriting(image: GrayPage, rng: np.random.Generator) -> Degraded:
    """Ballpoint marks: ticks, a circle, underlines and a signature scribble, no words."""
    page = Image.fromarray(image)
    draw = ImageDraw.Draw(page)
    height, width = image.shape
    pen = max(2, min(height, width) // 300)
    unit = min(height, width) / 20
    shade = int(rng.integers(40, 90))  # blue-black ink, as the grey page shows it
    marks = 0
    for _ in range(int(rng.integers(3, 6))):
        x, y = float(rng.uniform(0, width - 4 * unit)), float(rng.uniform(unit, height - 2 * unit))
        shape = int(rng.integers(4))
        points = _HAND[shape](x, y, unit, rng)
        draw.line(points, fill=shade, width=pen, joint="curve")
        marks += 1
    return Degraded(np.asarray(page, dtype=np.uint8), "", {"marks": marks})


Points = list[tuple[float, float]]


def _tick(x: float, y: float, u: float, rng: np.random.Generator) -> Points:
    return _wobble([(x, y), (x + 0.3 * u, y + 0.4 * u), (x + 0.9 * u, y - 0.5 * u)], u, rng)


def _circle(x: float, y: float, u: float, rng: np.random.Generator) -> Points:
    turns = np.linspace(0, 2.15 * np.pi, 40)  # a hand overshoots where it started
    w, h = float(rng.uniform(2, 4)) * u, float(rng.uniform(0.6, 1.0)) * u
    return _wobble([(x + w * (1 + np.cos(t)), y + h * np.sin(t)) for t in turns], u, rng)


def _underline(x: float, y: float, u: float, rng: np.random.Generator) -> Points:
    length = float(rng.uniform(2, 5)) * u
    return _wobble(
        [(x + length * t, y + 0.1 * u * np.sin(6 * t)) for t in np.linspace(0, 1, 20)], u, rng
    )


def _signature(x: float, y: float, u: float, rng: np.random.Generator) -> Points:
    t = np.linspace(0, 1, 80)
    loops = float(rng.uniform(4, 8))
    xs = x + 3.5 * u * t + 0.3 * u * np.sin(2 * np.pi * loops * t)
    ys = y - 0.5 * u * np.abs(np.sin(np.pi * loops * t)) * (1 - t)
    return _wobble(list(zip(xs.tolist(), ys.tolist(), strict=True)), u, rng)


def _wobble(points: Points, u: float, rng: np.random.Generator) -> Points:
    jitter = rng.normal(0.0, 0.03 * u, (len(points), 2))
    return [
        (px + float(dx), py + float(dy)) for (px, py), (dx, dy) in zip(points, jitter, strict=True)
    ]


_HAND: tuple[Callable[[float, float, float, np.random.Generator], Points], ...] = (
    _tick,
    _circle,
    _underline,
    _signature,
)


def _u8(values: np.typing.NDArray[np.float32]) -> GrayPage:
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


_KINDS: dict[str, Callable[[GrayPage, np.random.Generator], Degraded]] = {
    "skew": skew,
    "low_contrast": low_contrast,
    "jpeg": jpeg,
    "fax": fax,
    "stamp": stamp,
    "handwriting": handwriting,
}
