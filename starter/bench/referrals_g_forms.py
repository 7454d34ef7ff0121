"""The seventh generator's forms: dotted leaders, a header-row table, a numbered questionnaire.

- ``leader_form``: each label joined to its value by a dotted leader
  ("Referral raised on ........ 14 Mar 2025"), the patient's rows first, the
  referral's after them in an order of their own; consent ticked or ringed below.
- ``header_row_table``: bands of a wide table whose labels form a shaded header
  row, each value in the cell under its label; the patient surname first, the
  clinic sometimes in capitals.
- ``numbered_questionnaire``: numbered questions, each answer on the line below,
  indented on a rule; its dates spelt out.
"""

from __future__ import annotations

import random

from starter.bench.referrals_g_page import GREY, INK, Page, leader, show_consent, small_caps
from starter.bench.referrals_g_values import Drawn

__all__ = ["header_row_table", "leader_form", "numbered_questionnaire"]

_PATIENT = ("patient_name", "date_of_birth", "mrn", "other_id", "address", "phone")
_REFERRAL = ("referral_date", "participant_id", "referring_clinic", "clinician", "reason")


def _heading(page: Page, drawn: Drawn, title: str) -> int:
    """The clinic, its numbers, the date typed (top right) and ``title``; the y below."""
    s = drawn.shown
    page.put(110, 90, s["referring_clinic"], 36, "Serif-Bold", INK, 1000)
    page.put(110, 148, f"Tel {s['clinic_phone']}   Fax {s['fax']}", 22, "Sans", GREY, 640)
    typed = f"{drawn.labels['letter_date']}: {s['letter_date']}"
    page.flush(1544, 148, typed, 22)
    page.draw.line([(110, 196), (1544, 196)], INK, 3)
    page.put(110, 222, title, 32, "Sans-Bold", INK, 1434)
    return 300


def leader_form(drawn: Drawn, rng: random.Random) -> list[Page]:
    """Labels joined to values by dotted leaders; the referral's rows in a drawn order."""
    page, s = Page(), drawn.shown
    y = _heading(page, drawn, f"{s['study'].upper()}: REFERRAL FOR RESEARCH")
    referral = [*_REFERRAL, "appointment"]
    rng.shuffle(referral)
    at = rng.choice((660, 720, 760))
    for section, names in (("Patient", _PATIENT), ("Referral", (*referral, "gp"))):
        page.put(110, y, section, 28, "Serif-BoldItalic")
        y += 58
        for name in names:
            value = s["other_person_1" if name == "gp" else name]
            leader(page, 130, y, drawn.labels[name], value, at)
            y += 64
        y += 30
    if drawn.consent.mode != "absent" or drawn.consent.blank:
        page.put(110, y, "Research", 28, "Serif-BoldItalic")
        y = show_consent(page, 130, y + 62, 1400, drawn.consent, s["who"], drawn.meta["mark"])
    page.put(110, max(y + 40, 2150), f"Typed by {s['other_person_2']}", 22, "Sans", GREY)
    return [page]


def header_row_table(drawn: Drawn, rng: random.Random) -> list[Page]:
    """Bands of a wide table: a shaded row of labels, the values in the row under it."""
    page, s, lab = Page(), drawn.shown, drawn.labels
    y = _heading(page, drawn, f"Referral to the {s['study']}")
    bands = (
        ("PATIENT", [[("patient_name", 1), ("date_of_birth", 1), ("mrn", 1)],
                     [("other_id", 1), ("address", 2)], [("phone", 1), ("gp", 2)]]),
        ("REFERRAL", [[("referral_date", 1), ("participant_id", 1), ("appointment", 1)],
                      [("referring_clinic", 2), ("letter_date", 1)],
                      [("clinician", 2), ("typist", 1)], [("reason", 3)]]),
    )  # fmt: skip
    named = s | {"gp": s["other_person_1"], "typist": s["other_person_2"]}
    labels = lab | {"typist": "Typist"}
    for title, rows in bands:
        page.put(110, y, title, 24, "Sans-Bold", GREY)
        y += 44
        for row in rows:
            y = _table_row(page, y, [(labels[n], named[n], span) for n, span in row])
        y += 40
    if drawn.consent.mode != "absent" or drawn.consent.blank:
        y = show_consent(page, 110, y + 10, 1434, drawn.consent, s["who"], drawn.meta["mark"])
    return [page]


def _table_row(page: Page, y: int, cells: list[tuple[str, str, int]]) -> int:
    """One header row of labels and the row of values under it; the y below."""
    x, unit = 110, 1434 // 3
    for label, value, span in cells:
        x1 = x + unit * span
        page.frame((x, y, x1, y + 44), 1, (232, 232, 232))
        page.frame((x, y + 44, x1, y + 110), 1)
        small_caps(page, x + 10, y + 11, label, 20, INK, x1 - x - 20)
        page.put(x + 12, y + 60, value, 26, "Sans", INK, x1 - x - 24)
        x = x1
    return y + 110


def numbered_questionnaire(drawn: Drawn, rng: random.Random) -> list[Page]:
    """Numbered questions, each answered on the indented line below it."""
    page, s, lab = Page(), drawn.shown, drawn.labels
    y = _heading(page, drawn, f"{s['study']}: participant referral questionnaire")
    items = [
        (lab["q_referral_date"], s["referral_date"]),
        (lab["patient_name"], s["patient_name"]),
        (lab["date_of_birth"], s["date_of_birth"]),
        (lab["mrn"], s["mrn"]),
        (lab["other_id"], s["other_id"]),
        (lab["address"], s["address"]),
        (lab["phone"], s["phone"]),
        (lab["q_participant_id"], s["participant_id"]),
        (lab["q_referring_clinic"], s["referring_clinic"]),
        (lab["q_clinician"], s["clinician"]),
        (lab["gp"], s["other_person_1"]),
        (lab["q_reason"], s["reason"]),
        (lab["appointment"], s["appointment"]),
    ]
    for number, (question, answer) in enumerate(items, 1):
        page.put(110, y, f"{number}.", 24, "Sans-Bold")
        page.put(170, y, question, 24, "Sans", INK, 1370)
        page.draw.line([(210, y + 88), (1500, y + 88)], GREY, 1)
        page.put(220, y + 42, answer, 28, "Serif", INK, 1280)
        y += 112
    consent = drawn.consent
    if consent.mode != "absent" or consent.blank:
        intro = {"ticked": "Tick the statement that applies", "ringed": "Ring one answer"}
        page.put(110, y, f"{len(items) + 1}.", 24, "Sans-Bold")
        kind = "ringed" if consent.blank else consent.mode
        page.put(170, y, intro.get(kind, "Notes"), 24, "Sans", INK)
        show_consent(page, 220, y + 46, 1320, consent, s["who"], drawn.meta["mark"])
    page.put(110, 2230, f"Completed by {s['other_person_2']}", 22, "Sans", GREY)
    return [page]
