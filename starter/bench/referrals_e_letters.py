"""The fifth generator's letters: spoken sentences, a printed e-mail, a two-column summary.

``speech_letter`` has a letterhead with the sender's address and phone, the
recipient's block, a bold "Re:" line naming the patient and other numbers,
and values inside chatty sentences; ``email_printout`` is an e-mail printed
from a mail client (its "Sent:" time is the referral date) with a footer of
who printed it when; ``two_column`` puts the patient's details in a left
column and the referral's, labels above values, in the right.
"""

from __future__ import annotations

import random

from starter.bench.referrals_e_forms import consent_block
from starter.bench.referrals_e_page import Sheet
from starter.bench.referrals_e_values import Drawn


def speech_letter(drawn: Drawn, rng: random.Random) -> list[Sheet]:
    sheet, s, lab = Sheet(face=rng.choice(("serif", "sans"))), drawn.shown, drawn.labels
    sheet.text(80, 60, s["referring_clinic"], 40, "serif_bold")
    sheet.text(80, 115, f"{s['clinic_address']}   Phone {s['clinic_phone']}", 22)
    sheet.text(80, 200, s["recipient"], 26)
    sheet.text(80, 240, f"{s['recipient_address']} - tel {s['recipient_phone']}", 26)
    pronoun = _pronoun(drawn.consent.sentence, rng)
    y = sheet.wrap(
        80, 330, 1450,
        f"Re: {s['patient_name']}, {lab['dob']} {s['date_of_birth']}, "
        f"{lab['other_id']} {s['other_id']}, {lab['mrn']} {s['mrn']}", 28,
    )  # fmt: skip
    body = [
        f"I'm writing this on {s['referral_date']}, after seeing {s['patient_name']} "
        f"again in clinic with {'her' if pronoun == 'she' else 'his'} partner, "
        f"{s['other_person_1']}.",
        f"What I'd really like your help with is this: {s['reason']}.",
        f"{pronoun.capitalize()} tells me {pronoun} is already on your books, and the "
        f"number on {'her' if pronoun == 'she' else 'his'} study card is {s['participant_id']}.",
        f"{pronoun.capitalize()} lives at {s['address']} and the best number is {s['phone']}.",
        f"We have pencilled in a visit for {s['appointment']}.",
    ]
    if drawn.consent.sentence:
        body.insert(rng.randint(2, len(body)), drawn.consent.sentence)
    y += 40
    for paragraph in body:
        y = sheet.wrap(80, y, 1480, paragraph, 28) + 24
    y = consent_block(sheet, 80, y, 1450, drawn.consent) if not drawn.consent.sentence else y
    sheet.text(80, y + 20, "With best wishes,", 28)
    sheet.text(80, y + 140, s["clinician"], 28)
    sheet.text(80, y + 185, s["referring_clinic"], 24)
    sheet.text(80, y + 240, f"cc: {s['other_person_2']}", 24)
    return [sheet]


def _pronoun(sentence: str, rng: random.Random) -> str:
    """One patient, one pronoun: the consent sentence's when it names one."""
    words = set(sentence.casefold().replace(",", " ").split())
    if words & {"he", "his", "him"}:
        return "he"
    return "she" if words & {"she", "her"} else rng.choice(("she", "he"))


def email_printout(drawn: Drawn, rng: random.Random) -> list[Sheet]:
    sheet, s, lab = Sheet(face="mono"), drawn.shown, drawn.labels
    sheet.text(80, 60, f"{s['other_person_2']}", 28, "sans_bold")
    sheet.draw.line([(80, 110), (1574, 110)], fill=0, width=3)
    y = 140
    for key, value in (
        ("From:", f"{s['clinician']} ({s['referring_clinic']})"),
        ("Sent:", s["referral_date"]),
        ("To:", s["recipient"]),
        ("Cc:", s["other_person_1"]),
        ("Subject:", f"RE: new referral - {s['patient_name']}"),
    ):
        sheet.text(80, y, key, 24, "sans_bold")
        y = sheet.wrap(260, y, 1300, value, 24) + 8
    y += 40
    body = [
        "Hi all,",
        f"Please could you screen the patient below. {lab['participant_id']}: "
        f"{s['participant_id']} ({lab['dob']} {s['date_of_birth']}, {lab['mrn']} {s['mrn']}).",
        f"{lab['reason']}: {s['reason']}",
        f"{lab['appointment']} {s['appointment']}.",
    ]
    if drawn.consent.sentence:
        body.append(drawn.consent.sentence)
    for paragraph in body:
        y = sheet.wrap(80, y, 1480, paragraph, 24) + 20
    y = consent_block(sheet, 80, y, 1450, drawn.consent) if not drawn.consent.sentence else y
    sheet.text(80, y + 20, "Kind regards", 24)
    sheet.text(80, y + 70, s["clinician"], 24)
    sheet.text(80, y + 110, f"{s['referring_clinic']} | {s['clinic_address']}", 22)
    sheet.text(80, y + 150, f"Direct line {s['clinic_phone']}", 22)
    sheet.text(80, 2220, f"{lab['printed']} {s['printed']} - page 1", 20)
    return [sheet]


def _above(sheet: Sheet, x: int, y: int, width: int, label: str, value: str) -> int:
    sheet.text(x, y, label.upper(), 20, "sans_bold")
    return sheet.wrap(x, y + 34, width, value, 28) + 30


def two_column(drawn: Drawn, rng: random.Random) -> list[Sheet]:
    sheet, s, lab = Sheet(1700, 2200, rng.choice(("light", "sans"))), drawn.shown, drawn.labels
    sheet.draw.rectangle((0, 0, 1700, 150), fill=225)
    sheet.text(80, 40, s["referring_clinic"], 40, "sans_bold")
    sheet.text(80, 100, s["clinic_address"], 22)
    sheet.draw.line([(840, 200), (840, 1900)], fill=0, width=1)
    y = 220
    for label, name in (("Patient", "patient_name"), (lab["dob"], "date_of_birth"),
                        (lab["mrn"], "mrn"), (lab["other_id"], "other_id"),
                        ("Address", "address"), ("Phone", "phone")):  # fmt: skip
        y = _above(sheet, 80, y, 700, label, s[name])
    y = _above(sheet, 80, y, 700, "GP", s["other_person_1"])
    right = 220
    for name in ("referral_date", "participant_id", "clinician", "referring_clinic", "reason"):
        right = _above(sheet, 880, right, 740, lab[name], s[name])
    if drawn.consent.mode != "absent":
        sheet.text(880, right, lab["consent"].upper(), 20, "sans_bold")
        right = consent_block(sheet, 880, right + 34, 740, drawn.consent)
    sheet.draw.line([(80, 1980), (1620, 1980)], fill=0, width=1)
    sheet.text(80, 2000, f"{s['referring_clinic']} - tel {s['clinic_phone']}", 20)
    sheet.text(80, 2040, f"{lab['printed']} {s['printed']}", 20)
    sheet.text(80, 2080, f"For: {s['recipient']}, {s['recipient_address']}", 20)
    return [sheet]
