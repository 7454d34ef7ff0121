"""The fifth generator's forms: comb boxes, a left gutter of labels, a table with merged cells.

``comb_form`` writes ids and dates one character per box; ``gutter_notes``
holds its labels in a ruled left gutter with values (and a reason that wraps
over several lines) to the right; ``merged_table`` is a two-page grid whose
header and patient label span several cells, with a medication table on its
second page. ``consent_block`` draws consent the way a family asks: a
question whose answer is ticked or ringed, a crossed box beside a statement
that affirms or denies, a sentence, or nothing at all.
"""

from __future__ import annotations

import random

from starter.bench.referrals_e_page import Sheet
from starter.bench.referrals_e_values import POOLS, Consent, Drawn


def consent_block(sheet: Sheet, x: int, y: int, width: int, consent: Consent) -> int:
    """Consent at (x, y) as drawn; the y below it (unchanged when it is absent)."""
    if consent.mode == "absent":
        return y
    if consent.sentence:
        return sheet.wrap(x, y, width, consent.sentence, 28)
    if consent.mode == "statement":  # the statement says which way; the box is crossed
        sheet.rect((x, y, x + 36, y + 36))
        sheet.mark((x, y, x + 36, y + 36), "cross")
        return sheet.wrap(x + 56, y, width - 56, consent.question, 28)
    y = sheet.wrap(x, y, width, consent.question, 28)
    chosen = 0 if consent.truth else 1
    for n, answer in enumerate(consent.answers):
        left = x + 40 + n * 260
        if consent.mode == "ticked":
            sheet.rect((left, y, left + 36, y + 36))
            if n == chosen:
                sheet.mark((left, y, left + 36, y + 36), "tick")
            sheet.text(left + 54, y, answer, 28)
        else:
            word = sheet.text(left, y, answer, 28)
            if n == chosen:
                sheet.mark(word, "ring")
    return y + 70


def _labelled(sheet: Sheet, x: int, y: int, label: str, value: str, at: int = 560) -> int:
    sheet.text(x, y, label, 26, "cond_bold")
    sheet.text(x + at, y, value, 28)
    return y + 62


def comb_form(drawn: Drawn, rng: random.Random) -> list[Sheet]:
    sheet, s, lab = Sheet(face=rng.choice(("sans", "cond"))), drawn.shown, drawn.labels
    sheet.text(80, 70, s["referring_clinic"], 44, "sans_bold")
    sheet.text(80, 140, f"{s['clinic_address']}  |  Tel {s['clinic_phone']}", 24)
    sheet.text(80, 210, "STUDY REFERRAL - please complete in BLOCK CAPITALS", 30, "sans_bold")
    # The birth date goes in boxes DD MM YYYY: the redaction truth is what the page prints.
    drawn.identifiers["date_of_birth"] = s["date_of_birth"].replace("/", " ")
    y = 300
    for label, chars in (
        (lab["participant_id"], drawn.shown["participant_id"]),
        (f"{lab['referral_date']} (DD MM YYYY)", f"{drawn.comb_date[:2]} {drawn.comb_date[2:4]} "
         f"{drawn.comb_date[4:]}"),
        (lab["dob"], drawn.identifiers["date_of_birth"]),
        (lab["mrn"], s["mrn"]),
    ):  # fmt: skip
        sheet.text(80, y + 10, label, 26, "cond_bold")
        sheet.comb(640, y, chars)
        y += 90
    for name in ("patient_name", "clinician", "referring_clinic"):
        label = {"patient_name": "Surname, forename(s)"}.get(name, lab.get(name, ""))
        value = s[name]
        if name == "patient_name":
            last = s["patient_surname"]
            given = value.removesuffix(f" {last}")
            value = f"{last.upper()}, {given}" if rng.random() < 0.5 else value
        y = _labelled(sheet, 80, y + 10, label, value, 560)
    sheet.text(80, y + 10, lab["reason"], 26, "cond_bold")
    bottom = sheet.wrap(100, y + 70, 1400, s["reason"], 28)
    sheet.rect((80, y + 55, 1560, max(bottom, y + 260)))
    y = max(bottom, y + 260) + 40
    y = consent_block(sheet, 80, y, 1450, drawn.consent)
    sheet.text(80, y + 20, f"Form checked by: {s['other_person_1']}", 26)
    sheet.text(80, 2220, f"{lab['printed']} {s['printed']}   {lab['other_id']} {s['other_id']}", 22)
    return [sheet]


def gutter_notes(drawn: Drawn, rng: random.Random) -> list[Sheet]:
    sheet, s, lab = Sheet(face="serif"), drawn.shown, drawn.labels
    sheet.text(80, 60, f"To: {s['recipient']}", 26)
    sheet.text(80, 105, s["recipient_address"], 22)
    sheet.text(80, 140, s["recipient_phone"], 22)
    sheet.text(980, 60, s["referring_clinic"], 28, "serif_bold")
    sheet.text(980, 105, s["clinic_address"], 22)
    sheet.text(980, 140, f"T: {s['clinic_phone']}", 22)
    sheet.draw.line([(430, 230), (430, 2100)], fill=0, width=2)
    rows = drawn.rows(POOLS.gutter_notes_rows)
    rng.shuffle(rows)
    y = 260
    for label, value in rows:
        sheet.text(70, y, label, 22, "cond_bold")
        y = sheet.wrap(460, y, 1120, value, 28) + 18
    sheet.text(70, y, lab["reason"], 22, "cond_bold")
    y = sheet.wrap(460, y, 700, s["reason"], 28) + 18
    if drawn.consent.mode != "absent":
        sheet.text(70, y, lab["consent"], 22, "cond_bold")
        y = consent_block(sheet, 460, y, 1120, drawn.consent) + 10
    sheet.text(70, y + 20, "Copy to", 22, "cond_bold")
    sheet.text(460, y + 20, f"{s['other_person_2']} (community nurse)", 28)
    sheet.text(70, 2200, f"{lab['appointment']}: {s['appointment']}", 22)
    return [sheet]


def _cell(sheet: Sheet, box: tuple[int, int, int, int], label: str, value: str) -> None:
    sheet.rect(box)
    sheet.text(box[0] + 12, box[1] + 8, label, 20, "cond_bold")
    sheet.wrap(box[0] + 12, box[1] + 40, box[2] - box[0] - 30, value, 26, 6)


def merged_table(drawn: Drawn, rng: random.Random) -> list[Sheet]:
    first, s, lab = Sheet(face="cond"), drawn.shown, drawn.labels
    first.text(80, 60, s["referring_clinic"], 38, "cond_bold")
    first.text(80, 115, f"{s['clinic_address']} - {s['clinic_phone']}", 22)
    first.rect((80, 200, 1574, 260))
    first.text(100, 212, "REFERRAL TO RESEARCH CLINIC", 30, "cond_bold")  # spans all columns
    first.rect((80, 260, 380, 500))  # a label cell over two rows
    first.text(96, 360, "Patient", 26, "cond_bold")
    _cell(first, (380, 260, 977, 380), "Name", s["patient_name"])
    _cell(first, (977, 260, 1574, 380), lab["dob"], s["date_of_birth"])
    _cell(first, (380, 380, 977, 500), lab["mrn"], s["mrn"])
    _cell(first, (977, 380, 1574, 500), lab["other_id"], s["other_id"])
    _cell(first, (80, 500, 827, 620), lab["participant_id"], s["participant_id"])
    _cell(first, (827, 500, 1574, 620), lab["referral_date"], s["referral_date"])
    _cell(first, (80, 620, 827, 740), lab["clinician"], s["clinician"])
    _cell(first, (827, 740 - 120, 1574, 740), lab["referring_clinic"], s["referring_clinic"])
    _cell(first, (80, 740, 1574, 960), lab["reason"], s["reason"])  # spans all four
    _cell(first, (80, 960, 1574, 1080), "Next of kin", s["other_person_1"])
    first.text(80, 2220, "Page 1 of 2", 22)
    second = Sheet(face="cond")
    second.text(80, 80, f"{s['patient_name']} - continued", 28, "cond_bold")
    y = 170
    for n, heading in enumerate(("Medicine", "Dose", "Route", "Started by")):
        second.text(80 + n * 370, y, heading, 24, "cond_bold")
    second.draw.line([(80, y + 40), (1574, y + 40)], fill=0, width=2)
    for drug, dose in rng.sample(POOLS.drugs, 4):
        y += 60
        for n, value in enumerate((drug, dose, rng.choice(POOLS.routes), "GP")):
            second.text(80 + n * 370, y, value, 26)
    y = consent_block(second, 80, y + 120, 1450, drawn.consent)
    second.text(80, y + 30, f"{lab['appointment']}: {s['appointment']}", 26)
    second.text(80, y + 100, f"Signed: {s['clinician']}", 26)
    second.text(80, 2220, "Page 2 of 2", 22)
    return [first, second]
