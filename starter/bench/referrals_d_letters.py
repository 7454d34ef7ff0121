"""The fourth generator's prose families: a GP's letter and a research coordinator's memo.

In the letter the wanted values sit inside its sentences (the participant's
study code, the reason, the consent) beside a sidebar of the practice's
partners and numbers; in the memo the labels stand at the left margin and
their values far to the right, apart from them, under an e-mail style header
whose sender is not the referrer.
"""

from __future__ import annotations

import random

from starter.bench.referrals_d_marks import consent_marks
from starter.bench.referrals_d_page import Page
from starter.bench.referrals_d_values import POOLS, Drawn

_OPENINGS = (
    "Thank you for seeing {patient}, who is enrolled in your study under {pid}.",
    "I would be grateful if you could review {patient} (your study reference {pid}).",
    "Re-referral of {patient}; the participant's code on your register is {pid}.",
)
_REASONS = (
    "The main issue is {reason}, which has not settled with the usual measures.",
    "I am asking for your opinion on: {reason}.",
    "She presents with {reason} and I would value your advice.",
)
_ROLES = ("General Practitioner", "GP Principal", "Salaried GP", "Registrar in General Practice")


def gp_letter(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A practice letter: letterhead band, partners in a sidebar, values in sentences."""
    page, s = Page(rng, face="serif"), drawn.shown
    body = page.px(10.5)
    colour = rng.choice(((214, 230, 244), (226, 240, 226), (240, 232, 214)))
    page.band((0, 0, page.width, 190), colour)
    page.text(90, 50, s["referring_clinic"], page.px(17), "serif_bold")
    page.text(90, 125, f"Tel {s['clinic_phone']}", page.px(8.5), "sans")
    _sidebar(page, drawn, 1240, 260)
    y = 270
    if rng.random() < 0.5:  # a letter's date often stands alone, at the right
        page.text(1150 - page.length(s["referral_date"], body), y, s["referral_date"], body)
    else:
        page.text(90, y, f"{drawn.labels['referral_date']}: {s['referral_date']}", body)
    y += 110
    page.text(90, y, "Dear Colleague,", body)
    y += 90
    re_line = f"Re: {s['patient_name']}, {drawn.labels['dob']} {s['date_of_birth']}"
    page.text(90, y, re_line, body, "serif_bold")
    y += int(body * 1.5)
    page.text(90, y, f"{drawn.labels['other_id']} {s['other_id']}   {s['address']}", body)
    y += 100
    text = [
        rng.choice(_OPENINGS).format(patient=s["patient_name"], pid=s["participant_id"]),
        rng.choice(_REASONS).format(reason=_in_sentence(s["reason"])),
        f"I have booked a review with our practice nurse, {s['other_person_1']}, "
        f"on {s['appointment']}; results to follow.",
    ]
    if drawn.consent.sentence:
        text.insert(rng.randint(1, 3), drawn.consent.sentence)
    for paragraph in text:
        y = page.wrap(90, y, 1080, paragraph, body) + 34
    y += 60
    page.text(90, y, rng.choice(("Yours sincerely,", "Kind regards,", "With thanks,")), body)
    page.text(90, y + 150, s["clinician"], body, "serif_bold")
    page.text(90, y + 150 + int(body * 1.5), rng.choice(_ROLES), body, "serif_italic")
    page.text(90, page.height - 110, f"{drawn.labels['printed']} {s['printed']}", page.px(7))
    return [page]


def _in_sentence(reason: str) -> str:
    """The reason as a sentence carries it: lower case first, unless it starts an acronym."""
    return reason if reason[:2].isupper() else reason[0].lower() + reason[1:]


def _sidebar(page: Page, drawn: Drawn, x: int, y: int) -> None:
    """The practice's column: partners (other people) and its numbers."""
    small = page.px(8)
    page.text(x, y, "Partners", small, "sans_bold")
    for name in (drawn.shown["other_person_2"], drawn.shown["other_person_3"]):
        y += int(small * 1.6)
        page.text(x, y, f"Dr {name}", small, "sans")
    y += int(small * 3)
    page.text(x, y, f"{drawn.labels['mrn']} {drawn.shown['mrn']}", small, "sans")
    page.draw.line((x - 30, 240, x - 30, 1500), fill=(170, 170, 170), width=2)


def research_memo(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A coordinator's memo: mail header, then labels at the margin, values far right."""
    page, s = Page(rng, face="mono"), drawn.shown
    size = page.px(9)
    head = [
        ("From:", f"{s['other_person_1']} (research coordinator)"),
        ("To:", "Screening team"),
        ("Forwarded:", s["printed"]),
        ("Subject:", "New referral into the study"),
    ]
    y = 120
    for key, value in head:
        page.text(100, y, key, size, "sans_bold")
        page.text(330, y, value, size, "sans")
        y += int(size * 1.6)
    page.rule(100, page.width - 100, y + 20)
    y += 90
    column = rng.choice((880, 960, 1040))
    rows = drawn.rows(POOLS.research_memo_rows)
    rng.shuffle(rows)
    widest = max(page.length(value, size, "sans") for _, value in rows)
    column = min(column, page.width - 90 - widest)  # far from the label, still on the page
    for label, value in rows:
        page.text(100, y, label.upper() if rng.random() < 0.3 else label, size)
        page.text(column, y, value, size, "sans")
        y += int(size * 2.1)
    y = _memo_consent(page, drawn, y + 60, column, size)
    page.text(100, y + 80, f"Address on file: {s['address']}", size, "sans")
    return [page]


def _memo_consent(page: Page, drawn: Drawn, y: int, column: int, size: int) -> int:
    if drawn.consent.sentence:
        return page.wrap(100, y, page.width - 200, f"Note: {drawn.consent.sentence}", size, "sans")
    return consent_marks(page, drawn, (100, column), y, size)
