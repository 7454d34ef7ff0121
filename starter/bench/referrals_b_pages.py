"""How the second referral generator (``starter.bench.referrals_b``) puts things on paper.

A ``Sheet`` is an A4 page at 200 dpi in one of the DejaVu faces (Pillow's
own face stands in where DejaVu is not installed); consent is put as a
statement beside a ticked box, a pair of options, a sentence or a word, in
the generator's wordings (``data/referrals_b.json``; ``*_reserved``: the first
held-out split's, now tuned on; ``*_held``: today's held-out split only).
``finish`` scans the pages with the degradations a referral may get. The families
themselves are in ``starter.bench.referrals_b_forms``.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from starter.bench.degrade import degrade
from starter.bench.referrals_b_values import POOLS, Drawn

WIDTH, HEIGHT = 1654, 2339  # A4 at 200 dpi
PAPER, INK = 246, 30
_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
FACES = {
    "serif": "DejaVuSerif.ttf",
    "serif_bold": "DejaVuSerif-Bold.ttf",
    "sans": "DejaVuSans.ttf",
    "sans_bold": "DejaVuSans-Bold.ttf",
    "cond": "DejaVuSansCondensed.ttf",
    "mono": "DejaVuSansMono.ttf",
}
DEGRADATIONS: tuple[str | None, ...] = (None, None, "skew", "fax", "jpeg", "handwriting", "noise")


def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    path = _DEJAVU / FACES[face]
    if path.is_file():
        return ImageFont.truetype(str(path), size)
    fallback = ImageFont.load_default(size=size)
    assert isinstance(fallback, ImageFont.FreeTypeFont)
    return fallback


class Sheet:
    """One page being drawn, in the document's face."""

    def __init__(self, face: str) -> None:
        self.image = Image.new("L", (WIDTH, HEIGHT), PAPER)
        self.draw = ImageDraw.Draw(self.image)
        self.face = face

    def text(self, x: float, y: float, text: str, size: int = 30, face: str | None = None) -> int:
        """``text`` at (x, y); returns where it ends across the page."""
        drawn = font(face or self.face, size)
        self.draw.text((x, y), text, font=drawn, fill=INK)
        return int(x + self.draw.textlength(text, font=drawn))

    def right(self, x: float, y: float, text: str, size: int = 30, face: str | None = None) -> None:
        """``text`` ending at x: values pushed to the right margin."""
        width = self.draw.textlength(text, font=font(face or self.face, size))
        self.text(x - width, y, text, size, face)

    def rect(self, box: tuple[float, float, float, float], width: int = 2) -> None:
        self.draw.rectangle(box, outline=INK, width=width)

    def checkbox(self, x: float, y: float, marked: bool, mark: str, side: int = 28) -> None:
        self.draw.rectangle((x, y, x + side, y + side), outline=INK, width=3)
        if not marked:
            return
        a, b = x + 5, x + side - 5
        if mark == "cross":
            self.draw.line((a, y + 5, b, y + side - 5), fill=INK, width=4)
            self.draw.line((b, y + 5, a, y + side - 5), fill=INK, width=4)
        elif mark == "tick":
            points = (a, y + side * 0.55, x + side * 0.42, y + side - 4, b + 4, y - 4)
            self.draw.line(points, fill=INK, width=4)
        elif mark == "filled":
            self.draw.rectangle((a, y + 5, b, y + side - 5), fill=INK)
        else:  # a single stroke across, as a hurried pen leaves it
            self.draw.line((a, y + side - 5, b, y + 5), fill=INK, width=4)


def consent_statements(
    sheet: Sheet, x: float, y: float, drawn: Drawn, size: int = 28, gap: int = 56
) -> float:
    """Two ticked-box statements, one affirming and one refusing; returns the next y."""
    pairs = list(zip(POOLS.affirm_statements, POOLS.deny_statements, strict=True))
    pairs += list(POOLS.statements_reserved) if drawn.held_out else []
    affirm, deny = drawn.rng.choice(pairs)
    given = bool(drawn.truth["consent"])
    order = [(affirm, given), (deny, not given)]
    if drawn.rng.random() < 0.3:
        order.reverse()
    for text, marked in order:
        sheet.checkbox(x, y + 2, marked, drawn.mark)
        sheet.text(x + 46, y, text, size)
        y += gap
    return y


def consent_options(sheet: Sheet, x: float, y: float, drawn: Drawn, size: int = 28) -> None:
    """The consent label, then a box before each of two options (yes/no and the like)."""
    options = POOLS.options + (POOLS.options_reserved if drawn.held_out else ())
    options += POOLS.options_held if drawn.fresh else ()
    yes, no = drawn.rng.choice(options)
    at = sheet.text(x, y, f"{drawn.labels['consent']}:", size) + 36
    for word, marked in ((yes, bool(drawn.truth["consent"])), (no, not drawn.truth["consent"])):
        sheet.checkbox(at, y + 2, marked, drawn.mark)
        at = sheet.text(at + 42, y, word, size) + 60


def consent_sentence(drawn: Drawn) -> str:
    given = bool(drawn.truth["consent"])
    pool: tuple[str, ...] = POOLS.affirm_sentences if given else POOLS.deny_sentences
    if drawn.held_out:
        pool += POOLS.affirm_sentences_reserved if given else POOLS.deny_sentences_reserved
    if drawn.fresh:
        pool += POOLS.affirm_sentences_held if given else POOLS.deny_sentences_held
    return drawn.rng.choice(pool)


def consent_word(drawn: Drawn) -> str:
    options: tuple[tuple[str, str], ...] = POOLS.options
    options += POOLS.options_reserved if drawn.held_out else ()
    return drawn.rng.choice(options)[0 if drawn.truth["consent"] else 1]


def finish(
    pages: list[Image.Image], rng: random.Random, seed: int, key: str
) -> tuple[list[Image.Image], str | None]:
    """The pages as scanned: one degradation for the document, or none."""
    kind = rng.choice(DEGRADATIONS)
    if kind is None:
        return pages, None
    return [_scan(page, kind, seed, f"{key}:{n}") for n, page in enumerate(pages)], kind


def _scan(page: Image.Image, kind: str, seed: int, key: str) -> Image.Image:
    if kind == "noise":  # a dusty platen: specks, and a little blur from the glass
        rng = np.random.default_rng([seed, len(key), *key.encode()])
        pixels = np.asarray(page.filter(ImageFilter.GaussianBlur(0.8)), dtype=np.int16)
        specks = rng.random(pixels.shape) < 0.0015
        return Image.fromarray(np.where(specks, INK, pixels).astype(np.uint8))
    return Image.fromarray(degrade(np.asarray(page), kind, seed, key).image)
