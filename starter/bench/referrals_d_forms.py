"""The fourth generator's form families: two columns, a boxed grid, a table with
medications over two pages, and a US intake sheet.

- ``eform``: an e-referral printout in two columns, each label small and grey
  *above* its value, a system banner and a page footer with the print date.
- ``boxed``: every value inside a box with its label tiny in the box's top-left
  corner, three boxes to a row.
- ``med_table``: page one a ruled two-column table (label cell, value cell);
  page two the medications (drug, dose, frequency, start date) and consent;
  the hospital number in each page's header.
- ``us_intake``: US Letter, month-first dates (the labels say so), insurance
  member and group numbers, the provider's NPI, consent as HIPAA-style boxes.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from starter.bench.referrals_d_marks import consent_marks
from starter.bench.referrals_d_page import LETTER, Page
from starter.bench.referrals_d_values import POOLS, Drawn

_GREY = (110, 110, 110)


def eform(drawn: Drawn, rng: random.Random) -> list[Page]:
    """Two columns of label-above-value pairs under a banner."""
    page, s, labels = Page(rng, face="sans"), drawn.shown, drawn.labels
    small, value = page.px(7), page.px(10)
    page.band((0, 0, page.width, 130), rng.choice(((30, 70, 120), (90, 30, 80), (20, 90, 80))))
    page.text(70, 40, "e-Referral  ·  Outbound", page.px(13), "sans_bold", (255, 255, 255))
    left = [
        ("PATIENT", s["patient_name"]), (labels["dob"], s["date_of_birth"]),
        (labels["other_id"], s["other_id"]), ("Address", s["address"]),
        (labels["participant_id"], s["participant_id"]),
    ]  # fmt: skip
    right = [
        (labels["referral_date"], s["referral_date"]), (labels["appointment"], s["appointment"]),
        (labels["referring_clinic"], s["referring_clinic"]), (labels["clinician"], s["clinician"]),
        ("Phone", s["phone"]),
    ]  # fmt: skip
    for x, pairs in ((80, left), (860, right)):
        y = 220
        for label, shown in pairs:
            page.text(x, y, label.upper(), small, "sans", _GREY)
            page.text(x, y + int(small * 1.5), shown, value, "serif")
            y += int(small * 1.5 + value * 2.2)
    y = 220 + 5 * int(small * 1.5 + value * 2.2) + 40
    page.rule(80, page.width - 80, y)
    page.text(80, y + 30, labels["reason"].upper(), small, "sans", _GREY)
    y = page.wrap(80, y + 30 + int(small * 1.5), 1400, s["reason"], value, "serif") + 50
    consent_marks(page, drawn, (80, 700), y, page.px(9))
    foot = f"{labels['printed']} {s['printed']} by {s['other_person_2']}   Page 1 of 1"
    page.text(80, page.height - 90, foot, small, "sans", _GREY)
    return [page]


def boxed(drawn: Drawn, rng: random.Random) -> list[Page]:
    """Values in boxes, labels tiny in the corners, three boxes a row."""
    page, s, labels = Page(rng, face="oblique"), drawn.shown, drawn.labels
    tiny, value = page.px(6.5), page.px(9.5)
    page.text(
        80, 70, f"{s['referring_clinic']} : request for assessment", page.px(14), "serif_bold"
    )
    cells = [
        (labels["referral_date"], s["referral_date"]),
        (labels["participant_id"], s["participant_id"]), (labels["mrn"], s["mrn"]),
        ("Patient surname, forename", s["patient_name"]),
        (labels["dob"], s["date_of_birth"]), ("Tel.", s["phone"]),
        (labels["clinician"], s["clinician"]), (labels["referring_clinic"], s["referring_clinic"]),
        (labels["printed"], s["printed"]),
    ]  # fmt: skip
    width, height, top = (page.width - 160) // 3, int(value * 3.4), 200
    for n, (label, shown) in enumerate(cells):
        x, y = 80 + (n % 3) * width, top + (n // 3) * height
        page.box((x, y, x + width, y + height), 2)
        page.text(x + 8, y + 6, label, tiny, "sans")
        fits = value
        while page.length(shown, fits) > width - 28:  # long names shrink to their box
            fits -= 1
        page.text(x + 16, y + int(tiny * 1.9), shown, fits)
    y = top + 3 * height
    page.box((80, y, page.width - 80, y + height * 2), 2)
    page.text(88, y + 6, labels["reason"], tiny, "sans")
    page.wrap(96, y + int(tiny * 1.9), page.width - 200, s["reason"], value)
    y += height * 2 + 40
    consent_marks(page, drawn, (80, 620), y, page.px(8.5))
    page.text(80, page.height - 140, f"Home address: {s['address']}", tiny, "sans")
    return [page]


def med_table(drawn: Drawn, rng: random.Random) -> list[Page]:
    """Page one the referral as a ruled table; page two medications and consent."""
    s, labels = drawn.shown, drawn.labels
    one, two = Page(rng, face="serif"), Page(rng, face="serif")
    size = one.px(9)
    for n, page in enumerate((one, two), 1):
        page.text(90, 60, f"{labels['mrn']}: {s['mrn']}   {s['patient_name']}", page.px(8), "sans")
        page.text(page.width - 330, 60, f"Page {n} of 2", page.px(8), "sans")
    rows = [
        ["Item", "Detail"], [labels["referral_date"], s["referral_date"]],
        [labels["participant_id"], s["participant_id"]], [labels["dob"], s["date_of_birth"]],
        [labels["referring_clinic"], s["referring_clinic"]], [labels["clinician"], s["clinician"]],
        [labels["reason"], s["reason"]], [labels["appointment"], s["appointment"]],
    ]  # fmt: skip
    one.text(90, 160, "Clinic-to-clinic referral", one.px(15), "serif_bold")
    one.table(90, 280, [520, 960], rows, size)
    two.text(90, 160, "Current medication", two.px(13), "serif_bold")
    meds = [["Drug", "Dose", "Frequency", "Started"]]
    started = date(2019, 1, 1)
    for drug, dose in rng.sample(POOLS.drugs, rng.randint(3, 6)):
        started += timedelta(days=rng.randint(30, 700))
        meds.append([drug, dose, rng.choice(POOLS.frequencies), f"{started:%d/%m/%Y}"])
    y = two.table(90, 260, [560, 260, 330, 330], meds, two.px(8.5))
    consent_marks(two, drawn, (90, 760), y + 80, two.px(9))
    two.text(90, two.height - 180, f"Next of kin: {s['other_person_1']}", size)
    two.text(90, two.height - 120, f"Home: {s['address']}  ·  {s['phone']}", size)
    return [one, two]


def us_intake(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A US referral sheet: month-first dates, insurance ids, an NPI."""
    page, s, labels = Page(rng, LETTER, face="sans"), drawn.shown, drawn.labels
    size, small = page.px(9), page.px(7)
    hint = " (MM/DD/YYYY)" if drawn.meta["date_style"] == "us_numeric" else ""
    page.text(80, 60, "REFERRAL / AUTHORIZATION REQUEST", page.px(14), "sans_bold")
    page.text(80, 140, s["referring_clinic"], size, "serif_bold")
    rows = [
        ("Referral date" + hint if rng.random() < 0.5 else labels["referral_date"] + hint,
         s["referral_date"]),
        (labels["participant_id"], s["participant_id"]),
        ("Member ID", s["other_id"].replace(" ", "")),
        ("Group #", f"G{rng.randint(10000, 99999)}"), ("Patient name (Last, First)",
         ", ".join(reversed(s["patient_name"].split(" ", 1)))),
        ("DOB" + hint, s["date_of_birth"]), ("Referring provider", s["clinician"]),
        ("NPI", f"{rng.randint(1000000000, 1999999999)}"), ("Phone", s["phone"]),
        (labels["appointment"] + hint, s["appointment"]),
    ]  # fmt: skip
    y = 240
    for n in range(0, len(rows), 2):
        for (label, shown), x in zip(rows[n : n + 2], (80, 880), strict=False):
            page.text(x, y, f"{label}:", small, "sans_bold")
            page.text(x + page.length(f"{label}:", small, "sans_bold") + 20, y, shown, size)
        y += int(size * 2.3)
    page.rule(80, page.width - 80, y + 10)
    page.text(80, y + 40, f"{labels['reason']}:", small, "sans_bold")
    y = page.wrap(80, y + 40 + int(small * 1.7), 1500, s["reason"], size) + 40
    consent_marks(page, drawn, (80, 720), y, size)
    page.text(80, page.height - 100, f"Fax cover: {s['printed']} · {s['other_person_2']}", small)
    return [page]
