"""Generate the synthetic sample documents that `make run` submits.

The research corpus may not be redistributed, so the project ships these
instead: every name, number and date below is fictitious. Each document gets a
same-stem `.txt` ground truth holding exactly the drawn lines; pages are
separated by a line holding only a form feed (split on "\\n", not with
`str.splitlines()`, which also breaks on "\\f").

Usage: python examples/make_examples.py [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
Line = tuple[str, int]  # (text, font size in px); "" only adds vertical space
Page = Sequence[Line]

SEED = 20240314
PAPER, INK = 232, 28  # light-gray scanner background, near-black toner
MARGIN = 70  # wide enough that a <=1 degree rotation never clips text
# Pillow stamps "now" into the PDF info dict; a fixed date keeps output reproducible.
FIXED_DATE = time.gmtime(1_710_374_400)  # 2024-03-14T00:00:00Z
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
DEFAULT_OUT = Path(__file__).resolve().parent / "generated"

REFERRAL: Page = [
    ("NORTHWIND COMMUNITY CLINIC - REFERRAL", 36),
    ("Synthetic sample document - all details are fictitious", 24),
    ("", 28),
    ("Referral No.: REF-000123", 28),
    ("Date: 2024-03-14", 28),
    ("Patient: Test Patient Alpha", 28),
    ("Referring clinician: Dr. Example Clinician", 28),
    ("Refer to: Demo Cardiology Service", 28),
    ("Reason for referral: Intermittent palpitations for review", 28),
    ("", 28),
    ("Note: Symptoms reported over three weeks, no known allergies.", 28),
    ("Resting ECG in clinic was unremarkable.", 28),
    ("Please offer a routine outpatient appointment.", 28),
]
DISCHARGE: Sequence[Page] = [
    [
        ("NORTHWIND COMMUNITY CLINIC - DISCHARGE SUMMARY", 42),
        ("Page 1 of 2", 30),
        ("", 34),
        ("Patient: Test Patient Beta", 34),
        ("Record No.: MRN-000456", 34),
        ("Admitted: 2024-02-02", 34),
        ("Discharged: 2024-02-05", 34),
        ("Diagnosis: Community-acquired pneumonia, resolved", 34),
        ("", 34),
        ("Medications on discharge:", 34),
        ("1. Amoxicillin 500 mg three times daily for 5 days", 34),
        ("2. Paracetamol 500 mg as needed, at most 4 doses daily", 34),
        ("3. Saline nasal spray twice daily", 34),
    ],
    [
        ("NORTHWIND COMMUNITY CLINIC - DISCHARGE SUMMARY", 42),
        ("Page 2 of 2", 30),
        ("", 34),
        ("Follow-up instructions:", 34),
        ("Book a review with your family doctor within 7 days.", 34),
        ("Return to the clinic if breathing becomes difficult.", 34),
        ("Complete the full course of antibiotics.", 34),
        ("Rest and drink plenty of fluids.", 34),
        ("", 34),
        ("Discharging clinician: Dr. Sample Physician", 34),
        ("Synthetic sample document - all details are fictitious", 30),
    ],
]
FAX: Page = [
    ("FAX COVER SHEET", 50),
    ("", 34),
    ("To: Demo Cardiology Service (fax 555-0100)", 34),
    ("From: Northwind Community Clinic (fax 555-0199)", 34),
    ("Date: 2024-03-14", 34),
    ("Pages: 3 including this cover sheet", 34),
    ("Re: Referral REF-000123 for Test Patient Alpha", 34),
    ("", 34),
    ("CONFIDENTIALITY NOTICE: This fax is intended only for the named", 30),
    ("recipient. If you received it in error, notify the sender and", 30),
    ("destroy all copies. Synthetic sample - all content is fictitious.", 30),
]


def load_font(size: int) -> Font:
    """Return a scalable font of `size` px, degrading to Pillow's bitmap font."""
    try:
        # Pillow >= 10.1 embeds a scalable font, so output doesn't depend on system fonts.
        font: Font | None = ImageFont.load_default(size=size)
    except TypeError:  # older Pillow: load_default() takes no size
        font = None
    if isinstance(font, ImageFont.FreeTypeFont):
        return font
    try:
        return ImageFont.truetype(str(DEJAVU), size)
    except (OSError, ImportError):  # no FreeType or no font file: tiny, but still text
        return ImageFont.load_default()


def font_name() -> str:
    """Describe the font the documents are drawn with."""
    font = load_font(28)
    if isinstance(font, ImageFont.FreeTypeFont):
        return " ".join(name for name in font.getname() if name)
    return "Pillow bitmap default"


def render(page: Page, size: tuple[int, int]) -> Image.Image:
    """Draw `page` on clean gray paper, failing loudly if a line would not fit."""
    image = Image.new("L", size, PAPER)
    draw = ImageDraw.Draw(image)
    y = MARGIN
    for text, px in page:
        font = load_font(px)
        # An overflowing line would be cropped and silently disagree with the truth file.
        if text and draw.textlength(text, font=font) > size[0] - 2 * MARGIN:
            raise ValueError(f"line too wide for {size}: {text!r}")
        if text:
            draw.text((MARGIN, y), text, fill=INK, font=font)
        y += round(px * 1.5)
    if y > size[1] - MARGIN:
        raise ValueError(f"page too tall for {size}: needs {y + MARGIN} px")
    return image


def rotated(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Skew the page slightly, as a sheet fed by hand into a scanner would be."""
    angle = float(rng.uniform(-0.8, 0.8))
    return image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=PAPER)


def scanned(page: Page, size: tuple[int, int], rng: np.random.Generator) -> Image.Image:
    """Render `page` as a grayscale scan: slight skew plus mild sensor noise."""
    pixels = np.asarray(rotated(render(page, size), rng), dtype=np.float32)
    noisy = pixels + rng.normal(0.0, 5.0, pixels.shape)
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))


def faxed(page: Page, size: tuple[int, int], rng: np.random.Generator) -> Image.Image:
    """Render `page` as a bilevel fax: hard threshold plus sparse line-noise specks."""
    ink = np.asarray(rotated(render(page, size), rng)) < (PAPER + INK) // 2
    specks = rng.random(ink.shape) < 0.0004
    return Image.fromarray(~(ink | specks))  # bool array -> mode "1", True = white


def write_truth(path: Path, pages: Sequence[Page]) -> None:
    """Write the drawn lines, one per line, with a form-feed line between pages."""
    texts = ["\n".join(text for text, _ in page if text) for page in pages]
    path.write_text("\n\f\n".join(texts) + "\n", encoding="utf-8", newline="\n")


def generate(out: Path) -> list[Path]:
    """Write all example documents and their ground truths into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    # One generator per document, so editing one never changes the others' bytes.
    rngs = [np.random.default_rng([SEED, index]) for index in range(3)]

    referral = scanned(REFERRAL, (1275, 900), rngs[0])  # 150 DPI, half a letter page
    referral.save(out / "referral.png", dpi=(150, 150))
    write_truth(out / "referral.txt", [REFERRAL])

    first, *rest = [scanned(page, (1700, 1100), rngs[1]) for page in DISCHARGE]  # 200 DPI
    first.save(
        out / "discharge.pdf",
        save_all=True,
        append_images=rest,
        resolution=200,
        quality=75,  # typical scanner JPEG; higher mostly spends bytes on the noise
        title="Synthetic discharge summary",
        creationDate=FIXED_DATE,
        modDate=FIXED_DATE,
    )
    write_truth(out / "discharge.txt", DISCHARGE)

    fax = faxed(FAX, (1700, 1100), rngs[2])
    fax.save(out / "fax.tif", compression="group4", dpi=(200, 200))
    write_truth(out / "fax.txt", [FAX])

    stems = ["referral.png", "discharge.pdf", "fax.tif"]
    return [out / name for stem in stems for name in (stem, Path(stem).stem + ".txt")]


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, generate the examples and list what was written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    print(f"font: {font_name()}")


if __name__ == "__main__":
    main()
