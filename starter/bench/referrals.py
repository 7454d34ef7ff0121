"""Synthetic referrals with their ground truth, for the field tests and ``custody bench fields``.

Real referrals are not shareable, so this draws fictitious ones the way clinics
send them: label lists, boxed grids, letters and fax covers; the labels in
their usual wordings; dates in several printed styles; consent as a ticked or
crossed box; and, beside each wanted field, the distractor real forms carry (a
date of birth and a fax date beside the referral date, an MRN beside the
participant ID). Every document is drawn from a generator seeded by
``(seed, index)``, so a set is the same set on every machine.

Numeric dates are printed day first (14/03/2026), as the normaliser assumes
for these tenants; month names and ISO dates are unambiguous anyway.
Ground truth goes beside each file as ``<stem>.fields.json``:
``{"type": "referral", "fields": {"referral_date": "2026-03-14", ...}}``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from starter.bench.degrade import degrade
from starter.bench.pools import date_styles, pools
from starter.bench.referral_files import drawn_truth, write_referral

WIDTH, HEIGHT = 1700, 2200  # US letter at 200 dpi
PAPER, INK = 250, 20
LAYOUTS = ("list", "grid", "letter", "fax")
#: Degradations a referral may get (``None``: a clean scan), from the OCR benchmark's kinds.
DEGRADATIONS: tuple[str | None, ...] = (
    *(None, None, "skew", "fax", "jpeg", "low_contrast", "stamp"),
    *("blur", "low_res"),  # drawn here: a shaken scanner, a 100 dpi fax mode
)

#: Label wordings per field (``dob``, ``mrn`` and ``fax_date``: distractors, never wanted,
#: always near a wanted field), clinics, clinicians, reasons (``data/referrals.json``).
POOLS = pools("referrals")
#: Printed date styles, in the order drawn.
DATE_STYLES = date_styles(POOLS.date_styles)


@dataclass
class Referral:
    stem: str
    truth: dict[str, str | bool]
    pages: list[Image.Image]
    layout: str
    degradation: str | None
    meta: dict[str, str] = field(default_factory=dict)  # how it was drawn (no truth values)


def generate(index: int, seed: int) -> Referral:
    """Referral number ``index`` of the set ``seed``."""
    rng = random.Random(f"{seed}:{index}")
    truth, shown = _values(rng)
    layout = LAYOUTS[index % len(LAYOUTS)]
    labels = {name: rng.choice(options) for name, options in POOLS.labels.items()}
    mark = rng.choice(("cross", "tick"))
    pages = _DRAW[layout](shown, labels, mark, rng)
    kind = DEGRADATIONS[rng.randrange(len(DEGRADATIONS))]
    if kind is not None:
        pages = [_degrade(page, kind, seed, f"{index}:{n}") for n, page in enumerate(pages)]
    stem = f"referral-{seed}-{index:04d}"
    meta = {"layout": layout, "mark": mark, "date_style": shown["_style"], "pages": str(len(pages))}
    return Referral(stem, truth, pages, layout, kind, meta)


def write_set(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` referrals as PNG (one page) or PDF (several) with ``<stem>.fields.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for index in range(count):
        ref = generate(index, seed)
        written.append(write_referral(out, ref.stem, ref.pages, ref.truth, ref.meta))
    return written


def _values(rng: random.Random) -> tuple[dict[str, str | bool], dict[str, str]]:
    referred = date(2025, 1, 1) + timedelta(days=rng.randrange(600))
    style = rng.choice(tuple(DATE_STYLES))
    show = DATE_STYLES[style]
    pid = rng.choice(("P-{:05d}", "P{:06d}", "PT-{:04d}-A", "{:08d}")).format(rng.randrange(10**4))
    truth = drawn_truth(rng, POOLS, referred, pid, given=0.7)
    shown = {name: str(value) for name, value in truth.items() if name != "consent"}
    shown["referral_date"] = show(referred)
    shown["dob"] = show(date(1940, 1, 1) + timedelta(days=rng.randrange(25000)))
    shown["fax_date"] = show(referred + timedelta(days=rng.randrange(1, 9)))
    shown["mrn"] = f"{rng.randrange(10**6, 10**7)}"
    shown["consent"] = "yes" if truth["consent"] else "no"
    shown["_style"] = style
    return truth, shown


def _font(size: int) -> ImageFont.FreeTypeFont:
    # Pillow's bundled FreeType face: the same glyphs on every machine, no system fonts.
    font = ImageFont.load_default(size=size)
    assert isinstance(font, ImageFont.FreeTypeFont)
    return font


def _page() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("L", (WIDTH, HEIGHT), PAPER)
    return image, ImageDraw.Draw(image)


def _checkbox(draw: ImageDraw.ImageDraw, x: int, y: int, marked: bool, mark: str) -> None:
    draw.rectangle((x, y, x + 30, y + 30), outline=INK, width=3)
    if not marked:
        return
    if mark == "cross":
        draw.line((x + 5, y + 5, x + 25, y + 25), fill=INK, width=4)
        draw.line((x + 25, y + 5, x + 5, y + 25), fill=INK, width=4)
    else:
        draw.line((x + 4, y + 16, x + 12, y + 26, x + 28, y + 2), fill=INK, width=4, joint="curve")


def _consent_line(
    draw: ImageDraw.ImageDraw,
    x: int,
    y: int,
    label: str,
    shown: dict[str, str],
    mark: str,
    font: ImageFont.FreeTypeFont,
) -> None:
    draw.text((x, y), f"{label}:", font=font, fill=INK)
    at = x + int(draw.textlength(f"{label}:", font=font)) + 30
    for answer in ("Yes", "No"):
        _checkbox(draw, at, y + 2, shown["consent"] == answer.lower(), mark)
        draw.text((at + 42, y), answer, font=font, fill=INK)
        at += 160


def _draw_list(
    shown: dict[str, str], labels: dict[str, str], mark: str, rng: random.Random
) -> list[Image.Image]:
    image, draw = _page()
    font, head = _font(32), _font(44)
    draw.text((120, 110), f"{shown['referring_clinic'].upper()}", font=head, fill=INK)
    draw.text((120, 175), "Outpatient referral form", font=font, fill=INK)
    order = ["fax_date", "referral_date", "participant_id", "mrn", "dob", "clinician", "reason"]
    rng.shuffle(order)
    y = 300
    for name in order:
        draw.text((120, y), f"{labels[name]}:", font=font, fill=INK)
        draw.text((720, y), shown[name], font=font, fill=INK)
        y += 80
    _consent_line(draw, 120, y + 20, labels["consent"], shown, mark, font)
    draw.text(
        (120, y + 140),
        f"{labels['referring_clinic']}: {shown['referring_clinic']}",
        font=font,
        fill=INK,
    )
    return [image]


def _draw_grid(
    shown: dict[str, str], labels: dict[str, str], mark: str, rng: random.Random
) -> list[Image.Image]:
    image, draw = _page()
    small, font = _font(24), _font(32)
    draw.text((120, 100), "REFERRAL", font=_font(48), fill=INK)
    cells = [
        "referral_date",
        "fax_date",
        "participant_id",
        "mrn",
        "dob",
        "clinician",
        "referring_clinic",
        "reason",
    ]
    rng.shuffle(cells)
    for n, name in enumerate(cells):
        x, y = 120 + (n % 2) * 740, 220 + (n // 2) * 170
        draw.rectangle((x, y, x + 720, y + 150), outline=INK, width=3)
        draw.text((x + 15, y + 12), labels[name], font=small, fill=INK)
        draw.text((x + 15, y + 70), shown[name], font=font, fill=INK)
    y = 220 + 4 * 170 + 40
    draw.rectangle((120, y, 1580, y + 110), outline=INK, width=3)
    _consent_line(draw, 140, y + 35, labels["consent"], shown, mark, font)
    return [image]


def _draw_letter(
    shown: dict[str, str], labels: dict[str, str], mark: str, rng: random.Random
) -> list[Image.Image]:
    image, draw = _page()
    font = _font(32)
    lines = [
        (shown["referring_clinic"], 40),
        (f"{labels['referral_date']}: {shown['referral_date']}", 200),
        (f"Re: participant, {labels['dob']} {shown['dob']}", 320),
        (
            f"{labels['participant_id']}: {shown['participant_id']}"
            f"   {labels['mrn']}: {shown['mrn']}",
            380,
        ),
        ("Dear colleague,", 480),
        (
            "Thank you for seeing this participant. " + f"{labels['reason']}: {shown['reason']}.",
            560,
        ),
        ("Please offer an outpatient appointment at your earliest convenience.", 620),
        (f"Yours sincerely, {shown['clinician']}", 760),
        (f"{labels['clinician']}: {shown['clinician']}", 820),
    ]
    for text, y in lines:
        draw.text((140, 100 + y), text, font=_font(40) if y == 40 else font, fill=INK)
    _consent_line(draw, 140, 1040, labels["consent"], shown, mark, font)
    return [image]


def _draw_fax(
    shown: dict[str, str], labels: dict[str, str], mark: str, rng: random.Random
) -> list[Image.Image]:
    cover, draw = _page()
    font = _font(36)
    draw.text((120, 120), "FAX COVER SHEET", font=_font(64), fill=INK)
    rows = [
        ("To", "Referral intake"),
        ("From", shown["referring_clinic"]),
        (labels["fax_date"], shown["fax_date"]),
        ("Pages", "2 including cover"),
    ]
    for n, (label, value) in enumerate(rows):
        draw.text((120, 300 + n * 90), f"{label}: {value}", font=font, fill=INK)
    draw.text((120, 760), "CONFIDENTIAL: intended for the addressee only.", font=font, fill=INK)
    return [cover, *_draw_list(shown, labels, mark, rng)]


_DRAW = {"list": _draw_list, "grid": _draw_grid, "letter": _draw_letter, "fax": _draw_fax}


def _degrade(page: Image.Image, kind: str, seed: int, key: str) -> Image.Image:
    if kind == "blur":
        return page.filter(ImageFilter.GaussianBlur(1.4))
    if kind == "low_res":
        return page.resize((WIDTH // 2, HEIGHT // 2), Image.Resampling.BILINEAR)
    return Image.fromarray(degrade(np.asarray(page), kind, seed, key).image)
