"""The third generator's letter families: a hospital letter, a two-page fax, a summary table.

``letterhead``: a trust's letterhead, a reference block at the top right (our
ref, your ref, the wanted fields, a typed date), the patient in a "Re:" line,
consent in a sentence of the body, the clinician in the sign-off, the GP
copied in. ``fax``: a cover sheet (numbers, a sent date, a page count), then
a monospace printout of upper-case keys padded with dots; consent a Y or N
(or the option pair's word). ``summary``: a key-value table whose keys sit
in a shaded left column; consent as a sentence in its cell.
"""

from __future__ import annotations

import random

from PIL import Image

from starter.bench.referrals_c_sheet import WIDTH, Sheet
from starter.bench.referrals_c_values import SENTENCES, Drawn

_REF_BLOCK = ("participant_id", "referral_date", "referring_clinic")


def letterhead(d: Drawn, rng: random.Random) -> list[Image.Image]:
    s = Sheet(rng)
    s.box((100, 90, 230, 220), 4, fill=200)
    s.text(260, 95, "Westmoor Teaching Hospitals NHS Trust", 38, "serif_bold")
    s.text(260, 150, "Clinical Research Facility, Level 3, Ashby Wing", 24, "italic")
    s.text(260, 185, f"Fax {d.shown['fax']}", 22, "light")
    rows = [("Our ref", f"CRF/{rng.randint(100, 999)}/{rng.randint(10, 99)}")]
    rows += [("Your ref", f"GP{rng.randint(1000, 9999)}")]
    rows += d.labelled(_REF_BLOCK)
    rows += [("Typed", d.shown["other_date"])]
    y = 300
    for label, value in rows:
        s.right(1180, y, f"{label}:", 22, "sans")
        s.text(1195, y, value, 22, "serif")
        y += 38
    s.text(120, 320, "Private and confidential", 24, "sans_bold")
    patient = f"Re: {d.shown['patient_name']}, born {d.shown['date_of_birth']}"
    s.text(120, 560, patient, 28, "serif_bold")
    s.text(120, 600, d.shown["address"] + f"   Tel. {d.shown['phone']}", 26, "serif")
    body = [
        "Dear Colleague,",
        f"{d.labels['reason']}: {d.shown['reason']}.",
        "I would be grateful if you could assess this patient for the study at your",
        "earliest convenience. Recent results are enclosed with this letter.",
        rng.choice(SENTENCES[d.consent]),
    ]
    y = 700
    for line in body:
        s.text(120, y, line, 28, "serif")
        y += 56
    s.text(120, y + 60, "Yours sincerely,", 28, "serif")
    s.hand(120, y + 130, d.shown["clinician"].split()[-1], 44)
    s.text(120, y + 210, f"{d.labels['clinician']}: {d.shown['clinician']}", 28, "serif")
    s.text(120, y + 260, f"cc: {d.shown['gp']}, general practitioner", 24, "italic")
    return [s.image]


def fax(d: Drawn, rng: random.Random) -> list[Image.Image]:
    cover = Sheet(rng)
    cover.text(120, 120, "F A X", 90, "sans_bold")
    lines = [
        ("To", "Central Trial Office"),
        ("From", d.shown["referring_clinic"]),
        ("Fax no.", d.shown["fax"]),
        ("Date sent", d.shown["other_date"]),
        ("Pages", "2 (including this cover)"),
    ]
    for n, (key, value) in enumerate(lines):
        cover.text(120, 330 + n * 80, f"{key}:", 34, "sans_bold")
        cover.text(460, 330 + n * 80, value, 34, "sans")
    notice = "CONFIDENTIAL: if received in error, telephone the sender and destroy all pages."
    cover.text(120, 900, notice, 24, "oblique")
    page = Sheet(rng)
    page.text(100, 90, "REFERRAL FOR STUDY ASSESSMENT", 36, "mono")
    keys = [
        ("PATIENT", d.shown["patient_name"].upper()),
        ("DOB", d.shown["date_of_birth"]),
        ("NHS NUMBER", d.shown["nhs"]),
        ("TEL", d.shown["phone"]),
        ("ADDRESS", d.shown["address"].upper()),
        *((d.labels[n].upper(), d.shown[n]) for n in ("participant_id", "referral_date")),
        *((d.labels[n].upper(), d.shown[n]) for n in ("referring_clinic", "clinician", "reason")),
        (d.labels["consent"].upper(), d.options[0] if d.consent else d.options[1]),
    ]
    for n, (key, value) in enumerate(keys):
        page.text(100, 220 + n * 70, f"{key:.<30}: {value}", 26, "mono")
    return [cover.image, page.image]


def summary(d: Drawn, rng: random.Random) -> list[Image.Image]:
    s = Sheet(rng)
    s.text(110, 100, "Referral summary", 46, "sans_bold")
    s.text(110, 170, f"Printed {d.shown['other_date']} from the electronic record", 22, "light")
    consent_cell = rng.choice(SENTENCES[d.consent])
    rows = [
        ("Participant", d.shown["patient_name"]),
        ("Date of birth", d.shown["date_of_birth"]),
        (d.labels["participant_id"], d.shown["participant_id"]),
        ("Insurance / NHS", d.shown["nhs"]),
        *d.labelled(("referral_date", "referring_clinic", "clinician")),
        ("Registered GP", d.shown["gp"]),
        ("Contact", f"{d.shown['phone']}; {d.shown['address']}"),
        (d.labels["reason"], d.shown["reason"]),
        (d.labels["consent"], consent_cell),
    ]
    y, split = 260, 560
    for key, value in rows:
        tall = len(value) > 58
        h = 130 if tall else 80
        s.shade((110, y, split, y + h))
        s.box((110, y, WIDTH - 110, y + h), 2)
        s.draw.line((split, y, split, y + h), fill=25, width=2)
        s.text(125, y + 22, key, 24, "sans_bold")
        _cell(s, split + 18, y + 20, value)
        y += h
    return [s.image]


def _cell(s: Sheet, x: int, y: int, value: str) -> None:
    """A value in its cell, wrapped once at a word near its middle when it is long."""
    if len(value) <= 58:
        s.text(x, y, value, 26, "serif")
        return
    words = value.split()
    half = len(words) // 2
    s.text(x, y, " ".join(words[:half]), 26, "serif")
    s.text(x, y + 48, " ".join(words[half:]), 26, "serif")
