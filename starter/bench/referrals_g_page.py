"""The seventh generator's page mechanics: leaders, small capitals, stickers, marks, ageing.

Pages are the sixth generator's ``Page`` (``starter.bench.referrals_f_page``: every
string kept with its box), drawn on with what this generator's families need: a
label joined to its value by a dotted leader, labels in small capitals, a
patient sticker pasted at an angle (kept as one string in one box: its lines
turn with it), ticked statements, ringed or radio answers, and consent said in
a sentence. ``age`` then hands the page over clean, speckled, skewed, saved as a
poor JPEG, faxed to black and white, or faded.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from starter.bench.referrals_f_page import GREY, INK, Box, Ink, Page, face
from starter.bench.referrals_g_values import Consent

__all__ = ["AGEING", "GREY", "INK", "Page", "age", "face", "leader", "show_consent",
           "small_caps", "sticker"]  # fmt: skip

AGEING = ("clean", "speckled", "skewed", "jpeg", "bitonal", "faded")


def leader(page: Page, x: int, y: int, label: str, value: str, at: int,
           size: int = 26, style: str = "Serif") -> Box:  # fmt: skip
    """``label`` from ``x``, a dotted leader to ``at``, then ``value`` to the right margin."""
    end = page.put(x, y, label, size, style, INK, at - x - 60)[2]
    for dot in range(end + 14, at - 22, 13):
        page.draw.rectangle((dot, y + size - 3, dot + 2, y + size - 1), fill=GREY)
    return page.put(at, y, value, size + 2, "Sans-Bold", INK, page.width - 90 - at)


def small_caps(page: Page, x: int, y: int, s: str, size: int = 18, fill: Ink = GREY,
               room: int = 0) -> Box:  # fmt: skip
    """``s`` as small capitals: capitals at a smaller size, so it reads as a quiet label."""
    return page.put(x, y, s.upper(), size, "SansCondensed", fill, room)


def sticker(page: Page, x: int, y: int, lines: list[str], rng: random.Random) -> Box:
    """A hospital's patient label, ``lines`` on it, pasted at (x, y) a little askew."""
    width, height = 600, 52 + 42 * len(lines)
    label = Image.new("RGB", (width, height), (252, 248, 228))
    draw = ImageDraw.Draw(label)
    draw.rectangle((0, 0, width - 1, height - 1), outline=(150, 140, 110), width=2)
    for n, line in enumerate(lines):
        font = face("SansMono-Bold" if n == 0 else "SansMono", 26)
        while font.getlength(line) > width - 40 and font.size > 16:
            font = face("SansMono-Bold" if n == 0 else "SansMono", font.size - 1)
        draw.text((20, 24 + 42 * n), line, fill=INK, font=font)
    turn = rng.uniform(-3.5, 3.5)
    turned = label.rotate(turn, Image.Resampling.BICUBIC, expand=True)
    # Only the label itself is pasted: the corners its turn opens stay the page's.
    outline = Image.new("L", label.size, 255).rotate(turn, Image.Resampling.BICUBIC, expand=True)
    page.image.paste(turned, (x, y), outline)
    return page._keep("   ".join(lines), (x, y, x + turned.width, y + turned.height))


def show_consent(page: Page, x: int, y: int, width: int, consent: Consent, who: str,
                 mark: str = "tick", size: int = 26) -> int:  # fmt: skip
    """``consent`` drawn from (x, y) within ``width``; the y below it."""
    if consent.mode == "ticked":
        for statement in consent.statements:
            page.frame((x, y + 2, x + 32, y + 34), 2)
            if statement == consent.sentence:
                page.tick((x, y + 2, x + 32, y + 34), mark)
            page.put(x + 56, y, statement, size, "Sans", INK, width - 60)
            y += int(size * 2.1)
        return y
    if consent.mode == "ringed" or consent.blank:
        return _ringed(page, x, y, width, consent, size)
    if consent.mode in ("agrees", "refuses"):
        return page.lines(x, y, width, consent.sentence.format(who=who), size, "Serif")
    return y


def _ringed(page: Page, x: int, y: int, width: int, consent: Consent, size: int) -> int:
    right = page.put(x, y, consent.sentence, size, "Sans-Bold", INK, width - 320)[2]
    at = max(right + 60, x + width - 300)
    for n, option in enumerate(consent.options):
        box = page.put(at, y, option, size + 2, "Sans")
        if consent.mode == "ringed" and consent.truth is (n == 0):
            x0, y0, x1, y1 = box
            page.draw.ellipse((x0 - 18, y0 - 12, x1 + 18, y1 + 12), outline=(30, 40, 120), width=4)
        at = box[2] + 80
    return y + int(size * 2.4)


def radio(page: Page, x: int, y: int, on: bool) -> None:
    """A screen's radio button at (x, y): a ring, filled when chosen."""
    page.draw.ellipse((x, y, x + 26, y + 26), outline=GREY, width=2)
    if on:
        page.draw.ellipse((x + 7, y + 7, x + 19, y + 19), fill=(20, 60, 160))


def age(page: Page, how: str, rng: random.Random) -> Image.Image:
    """The page as it reaches the intake, aged ``how`` (one of ``AGEING``)."""
    image = page.image
    if how == "speckled":
        image = _speckle(image.point(lambda v: 22 + int(v * 0.9)), rng)
    elif how == "jpeg":
        small = image.resize((page.width * 3 // 5, page.height * 3 // 5), Image.Resampling.BILINEAR)
        buffer = io.BytesIO()
        small.filter(ImageFilter.GaussianBlur(0.6)).save(buffer, "JPEG", quality=28)
        image = Image.open(io.BytesIO(buffer.getvalue())).resize(image.size).convert("RGB")
    elif how == "faded":
        image = image.point(lambda v: 105 + int(v * 0.58))
    if how in ("skewed", "speckled", "bitonal") or (how == "jpeg" and rng.random() < 0.5):
        turn = rng.uniform(0.4, 2.0) * rng.choice((-1, 1))
        image = image.rotate(turn, Image.Resampling.BICUBIC, fillcolor=(255, 255, 255))
    if how == "bitonal":  # a fax: black or white only, after the page went through askew
        grey = image.convert("L").filter(ImageFilter.GaussianBlur(0.7))
        image = _dust(grey.point(lambda v: 255 if v > 150 else 0), rng)
    return image.convert("RGB")


def _dust(image: Image.Image, rng: random.Random) -> Image.Image:
    """A fax line's dropouts: black specks, and a few white streaks across the page."""
    pixels = np.array(image)
    noise = np.random.default_rng(rng.randrange(2**32))
    pixels[noise.random(pixels.shape) < 0.0006] = 0
    for row in noise.integers(0, pixels.shape[0], size=4):
        pixels[row : row + 2, :] = 255
    return Image.fromarray(pixels)


def _speckle(image: Image.Image, rng: random.Random, share: float = 0.0012) -> Image.Image:
    """Scanner dust: ``share`` of the pixels turned dark, drawn from ``rng`` alone."""
    pixels = np.array(image.convert("RGB"))
    noise = np.random.default_rng(rng.randrange(2**32))
    spots = noise.random(pixels.shape[:2]) < share
    pixels[spots] = noise.integers(0, 90, size=(int(spots.sum()), 1), dtype=np.uint8)
    grain = noise.normal(0, 6, pixels.shape[:2])[..., None]
    return Image.fromarray(np.clip(pixels + grain, 0, 255).astype(np.uint8))
