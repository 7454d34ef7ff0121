"""The sixth generator's forms: a US e-referral printout, a dense request card, and a
form filled in by hand; and the consent block all its boxed pages share.

The printout has a dark header band, grey section bands and a key/value grid
(labels over boxed values, or beside them in a ruled table). The card is A5
landscape, four cells a row, labels above values, with its own printed date,
the birth date and an appointment date beside the referral's. The handwritten
form has printed labels on writing lines and its values, ticks and notes in a
pen's hand, sometimes in block capitals.
"""

from __future__ import annotations

import random

from starter.bench.referral_files import DrawnValues
from starter.bench.referrals_f_page import GREY, HANDS, INK, PENS, Grid, Page, grid
from starter.bench.referrals_f_values import Consent, said

Drawn = DrawnValues[Consent]
Cell = tuple[str, str, int]
_WHITE = (255, 255, 255)
_NOTES = (
    "Bloods attached",
    "Prefers morning appts",
    "Needs interpreter (Polish)",
    "Hard of hearing",
)
_CODES = ("R06.02", "G47.33", "R31.29", "I48.91", "M54.42", "R41.3", "E11.65", "R00.2")


def consent_block(page: Page, x: int, y: int, width: int, drawn: Drawn, size: int = 24) -> int:
    """The page's consent (a ticked statement, a ticked or ringed Yes/No, a sentence, or
    empty boxes) from ``y``; the y below it."""
    c = drawn.consent
    if c.mode == "ticked":
        for statement in c.statements:
            box = (x, y + 2, x + 30, y + 32)
            page.frame(box)
            page.put(x + 50, y, statement, size, "Sans", INK, width - 60)
            if statement == c.sentence:
                page.tick(box, "cross" if drawn.meta.get("mark") == "cross" else "tick")
            y += size * 2 + 4
        return y
    if c.mode == "sentence":
        who, their = ("Patient", "their") if page.hand is None else ("Pt", "their")
        return page.value(x, y, said(c, who, their), size, width)[3] + 24
    if c.mode == "yes_no" or c.blank:
        return _yes_no(page, (x, y, width, size), drawn.labels["consent"], c, drawn.meta["mark"])
    return y


def _yes_no(page: Page, at: tuple[int, int, int, int], label: str, c: Consent, mark: str) -> int:
    """``label``, then Yes and No, each with a box to tick (or, ``mark`` "ring", none)."""
    x, y, width, size = at
    left = page.put(x, y, f"{label}:", size, "Sans-Bold", INK, width // 2)[2]
    for word, means in (("Yes", True), ("No", False)):
        shown = page.put(left + 40, y, word, size)
        if mark == "ring":  # the answer ringed; no boxes
            left = shown[2] + 10
            if c.truth is means:
                page.tick(shown, "ring")
            continue
        box = (shown[2] + 14, y + 2, shown[2] + 44, y + 32)
        page.frame(box)
        if c.truth is means:
            page.tick(box, mark)
        left = box[2]
    return y + size * 2 + 8


#: Labels of the cells whose label is not drawn.
_FIXED = {
    "npi": "NPI", "study": "Study", "clinic_phone": "Office phone", "clinic_fax": "Office fax",
    "unit": "Referred to", "seen": "Last seen", "priority": "Priority", "code": "Dx code",
}  # fmt: skip


def cells(drawn: Drawn, spec: str, **given: str) -> list[Cell]:
    """The cells ``spec`` names ("key" or "key:columns", space-separated), labelled as
    drawn, holding the value shown (or the one ``given`` for that key)."""
    found = []
    for token in spec.split():
        key, _, span = token.partition(":")
        label = drawn.labels.get(key) or _FIXED[key]
        value = given.get(key) or drawn.shown[key]
        if key == "patient_name" and "urname" in label and key not in given:  # as it asks
            value = _surname_first(value)
        found.append((label, value, int(span or 1)))
    return found


def _surname_first(name: str) -> str:
    first, last = name.rsplit(" ", 1)
    return f"{last.upper()}, {first}"


def e_referral(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A US e-referral as printed from the sending system: bands, then a grid."""
    s, page = drawn.shown, Page()
    how = rng.choice(("boxed", "table"))
    page.frame((80, 60, 1574, 170), 1, shade=(52, 54, 60))
    title = rng.choice(("OUTBOUND REFERRAL", "ELECTRONIC REFERRAL ORDER", "eReferral: Research"))
    page.put(110, 88, title, 40, "Sans-Bold", _WHITE, 900)
    page.put(1140, 100, f"Order # {s['order']}", 26, "Sans", _WHITE, 410)
    page.put(90, 186, f"Printed {s['sent']}   Page 1 of 1", 20, "Sans", GREY)
    name = _surname_first(s["patient_name"])
    patient = cells(drawn, "patient_name date_of_birth mrn other_id phone other_id_2 address:2",
                    patient_name=name)  # fmt: skip
    referral = cells(
        drawn, "referral_date participant_id priority appointment reason:2 code unit:2",
        priority=rng.choice(("Routine", "Urgent", "Soon")), code=rng.choice(_CODES),
    )  # fmt: skip
    provider = cells(drawn, "clinician npi referring_clinic:2 clinic_phone clinic_fax")
    later = [("REFERRAL DETAILS", referral), ("REFERRING PROVIDER", provider)]
    rng.shuffle(later)
    y, g = 240, Grid(80, 1494, how, 2, 104 if how == "boxed" else 66)
    for band, section in [("PATIENT", patient), *later]:
        page.frame((80, y, 1574, y + 44), 1, shade=(222, 222, 222))
        page.put(96, y + 8, band, 24, "Sans-Bold")
        y = grid(page, y + 60, g, section) + 24
    y = consent_block(page, 96, y + 10, 1460, drawn)
    page.put(90, max(y + 30, 2200), f"Electronically signed by {s['clinician']}", 20, "Sans", GREY)
    return [page]


#: The card's rows (four columns each): the patient's two first, the others in any order.
_CARD = (
    "patient_name:2 date_of_birth mrn",
    "address:2 phone other_id",
    "next_of_kin:2 referral_date appointment",
    "participant_id study clinician:2",
    "referring_clinic:2 seen other_id_2",
)


def request_card(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A small, dense card: four cells a row, labels above values, several dates."""
    s, page = drawn.shown, Page(height=1169)
    page.frame((40, 40, 1614, 1129), 4)
    page.put(70, 62, rng.choice(("RESEARCH REQUEST CARD", "STUDY REFERRAL CARD")), 32, "Sans-Bold")
    page.put(1150, 72, f"Form RC/7 - printed {s['printed']}", 18, "Sans", GREY, 440)
    kin = f"{s['other_person_1']} ({s['kin']})"
    rows = [cells(drawn, spec, next_of_kin=kin) for spec in _CARD]
    later = rows[2:]
    rng.shuffle(later)
    for row in (*rows[:2], *later):
        rng.shuffle(row)
    laid = [cell for row in (*rows[:2], *later) for cell in row]
    laid += cells(drawn, "reason:4")
    y = grid(page, 120, Grid(60, 1534, "card", 4, 84, 18, 26), laid)
    y = consent_block(page, 70, y + 30, 1500, drawn, 24)
    page.draw.line([(70, y + 90), (700, y + 90)], GREY, 2)
    page.put(70, y + 100, "Signature of referrer", 16, "Sans", GREY)
    page.put(1200, 1070, "Office use: RC/7", 16, "Sans", GREY)
    return [page]


def handwritten_form(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A printed form filled in by hand: values on writing lines, ticks and notes in ink."""
    page = Page(hand=rng, pen=rng.choice(PENS), script=rng.choice(HANDS))
    s = drawn.shown
    caps = rng.random() < 0.4  # "please write in block capitals", and some do
    title = rng.choice(("REFERRAL TO RESEARCH CLINIC", "STUDY REFERRAL FORM"))
    page.put(110, 90, title, 40, "Sans-Bold")
    page.put(110, 160, "Please write clearly in BLOCK CAPITALS", 22, "Sans-Oblique", GREY)
    spec = (
        "patient_name:2 date_of_birth mrn address:2 phone other_id referral_date participant_id"
        " referring_clinic:2 clinician:2 reason:2 next_of_kin appointment"
    )
    written = cells(drawn, spec, next_of_kin=s["other_person_1"])
    written = [(label, value.upper() if caps else value, n) for label, value, n in written]
    y = grid(page, 240, Grid(110, 1434, "line", 2, 92, 22, 30), written)
    y = consent_block(page, 130, y + 40, 1380, drawn, 28) if drawn.consent.mode != "sentence" else y
    page.put(110, y + 40, "Notes", 24, "Sans-Bold")
    for n in range(4):
        page.draw.line([(110, y + 150 + n * 80), (1544, y + 150 + n * 80)], GREY, 1)
    if drawn.consent.mode == "sentence":
        consent_block(page, 130, y + 100, 1380, drawn, 28)
    else:
        page.write(130, y + 100, rng.choice(_NOTES), 32)
    y += 500
    page.put(110, y, "Signed", 22)
    scrawl = [(230 + n * 30, y + 10 + rng.randint(-22, 14)) for n in range(10)]
    page.draw.line(scrawl, page.pen, 3)
    page.put(900, y, "Date", 22)
    page.write(990, y - 20, s["referral_date"], 32)
    page.put(110, max(y + 80, 2220), f"Form HR-2 (rev. {s['printed']})", 18, "Sans", GREY)
    return [page]
