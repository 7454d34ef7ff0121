"""Born-digital referral pages that hide identifiers from a text layer: annotations, stamps,
label images.

Each page is typeset text (Helvetica, a real text layer, as a practice system
prints one) naming a fictitious patient, plus what a text layer does not hold:
a FreeText annotation with an appearance stream (Acrobat's or Preview's "add
text") naming the patient and the MRN, a rubber-stamp annotation with the MRN,
and a small image of a printed patient label (name, birth date, MRN). Ground
truth goes beside each file as ``<stem>.fields.json``, as for the referrals.

Splits with their own label wordings and names: ``dev`` (seed 1, what the
detectors were tuned on), ``held_out`` (seed 2; its labels, names and
streets drawn from other lists; its first run found a miss that was then
fixed, so it is no longer unseen) and ``held_out_b`` (seed 3, written after
that and run once, never tuned on).
"""

from __future__ import annotations

import io
import json
import random
import zlib
from pathlib import Path

import pikepdf
from PIL import Image, ImageDraw, ImageFont

from starter.bench.pools import pools

#: Each split's label wordings, names and streets (``data/born_digital.json``).
_SPLITS: dict[str, dict[str, tuple[str, ...]]] = pools("born_digital").splits
SPLITS = tuple(_SPLITS)
_SEEDS = {"dev": 1, "held_out": 2, "held_out_b": 3}
_W, _H = 612, 792


def write_set(out: Path, count: int, split: str) -> list[Path]:
    """``count`` one-page born-digital referrals of ``split``, with ``<stem>.fields.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for index in range(count):
        rng = random.Random(f"born-digital:{_SEEDS[split]}:{index}")
        truth, pdf = _referral(rng, _SPLITS[split], index)
        path = out / f"born-{split}-{index:04d}.pdf"
        path.write_bytes(pdf)
        body = {"type": "referral", "fields": truth, "drawn": {"split": split}}
        path.with_name(f"{path.stem}.fields.json").write_text(json.dumps(body, indent=1))
        written.append(path)
    return written


def _referral(
    rng: random.Random, words: dict[str, tuple[str, ...]], index: int
) -> tuple[dict[str, str], bytes]:
    given, surname = rng.choice(words["given"]), rng.choice(words["surname"])
    dob = f"{rng.randrange(1, 28):02d}/{rng.randrange(1, 13):02d}/{rng.randrange(1940, 2005)}"
    number = str(rng.randrange(100000, 999999))
    mrn = rng.choice(("MRN-{}", "{}", "MRN{}")).format(number)
    address = f"{rng.randrange(2, 200)} {rng.choice(words['street'])}, {rng.choice(words['town'])}"
    phone = f"0{rng.randrange(1000, 9999)} {rng.randrange(100000, 999999)}"
    pid = f"P-{rng.randrange(10000, 99999)}"
    label = rng.choice(words["name"])
    shown = f"{surname}, {given}" if "Surname" in label else f"{given} {surname}"
    lines = [
        ("Oakfield Surgery - referral letter", 16),
        (f"{label}: {shown}", 12),
        (f"{rng.choice(words['dob'])}: {dob}", 12),
        (f"{rng.choice(words['mrn'])}: {mrn}    Participant ID: {pid}", 12),
        (f"Address: {address}", 12),
        (f"{rng.choice(words['phone'])}: {phone}", 12),
        (f"I would be grateful if you could see {given} {surname}, who reports", 12),
        ("intermittent palpitations over the last three months.", 12),
        ("Yours sincerely, the duty doctor", 12),
    ]
    truth = {
        "patient_name": f"{given} {surname}",
        "date_of_birth": dob,
        "mrn": number,
        "participant_id": pid,
        "address": address,
        "phone": phone,
    }
    note = f"Patient {given} {surname} MRN {number}"
    return truth, _pdf(
        lines, note, f"RECEIVED MRN-{number}", f"{surname.upper()}, {given}", dob, number
    )


def _pdf(lines: list[tuple[str, int]], note: str, stamp: str, *label: str) -> bytes:
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1,
            BaseFont=pikepdf.Name.Helvetica, Encoding=pikepdf.Name.WinAnsiEncoding,
        )
    )  # fmt: skip
    fonts = pikepdf.Dictionary(F1=font)
    body, y = b"", 720
    for text, size in lines:
        body += b"BT /F1 %d Tf 60 %d Td (%s) Tj ET\n" % (size, y, _esc(text))
        y -= 2 * size + 6
    body += b"q 220 0 0 70 330 120 cm /Im1 Do Q\n"
    page = pdf.add_blank_page(page_size=(_W, _H))
    page.Resources = pikepdf.Dictionary(
        Font=fonts, XObject=pikepdf.Dictionary(Im1=_image(pdf, label))
    )
    page.Contents = pdf.make_stream(body)
    page.Annots = pdf.make_indirect(
        pikepdf.Array([
            _annot(pdf, fonts, "FreeText", [60, 300, 420, 322], note, 12),
            _annot(pdf, fonts, "Stamp", [60, 200, 300, 236], stamp, 16),
        ])
    )  # fmt: skip
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _annot(
    pdf: pikepdf.Pdf, fonts: pikepdf.Dictionary, kind: str, rect: list[int], text: str, size: int
) -> pikepdf.Dictionary:
    """An annotation whose appearance stream draws ``text``: what a viewer shows."""
    w, h = rect[2] - rect[0], rect[3] - rect[1]
    drawn = b"0 0 0 RG 1 w 0.5 0.5 %d %d re S BT /F1 %d Tf 4 %d Td (%s) Tj ET" % (
        w - 1, h - 1, size, (h - size) // 2 + 2, _esc(text),
    )  # fmt: skip
    appearance = pdf.make_stream(
        drawn, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Form, BBox=[0, 0, w, h],
        Resources=pikepdf.Dictionary(Font=fonts),
    )  # fmt: skip
    return pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Annot, Subtype=pikepdf.Name(f"/{kind}"), Rect=rect,
            Contents=pikepdf.String(text), AP=pikepdf.Dictionary(N=appearance),
        )
    )  # fmt: skip


def _image(pdf: pikepdf.Pdf, label: tuple[str, ...]) -> pikepdf.Stream:
    """A printed patient label as a grey image: name, birth date, MRN."""
    image = Image.new("L", (660, 210), 255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((2, 2, 657, 207), outline=0, width=3)
    font = ImageFont.load_default(size=40)
    name, dob, mrn = label
    for n, text in enumerate((name, f"DOB {dob}", f"MRN {mrn}")):
        draw.text((20, 12 + 64 * n), text, font=font, fill=0)
    return pdf.make_stream(
        zlib.compress(image.tobytes()), Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image,
        Width=image.width, Height=image.height, ColorSpace=pikepdf.Name.DeviceGray,
        BitsPerComponent=8, Filter=pikepdf.Name.FlateDecode,
    )  # fmt: skip


def _esc(text: str) -> bytes:
    raw = text.encode("cp1252")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
