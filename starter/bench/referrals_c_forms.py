"""The third generator's form families: a lab requisition grid, a hand-filled form, a
questionnaire with Yes/No columns.

``lab_grid``: ruled cells, each with a tiny label in its top-left corner and
the value below it; consent as two ticked-or-empty boxes in one cell.
``handwritten``: printed labels on dotted lines, the values written in; the
consent answer is the option left standing when the other is struck through.
``questionnaire``: a header of underlined blanks, then questions in rows with
a Yes and a No column of boxes; only one row asks about disclosure.
"""

from __future__ import annotations

import random

from PIL import Image

from starter.bench.referrals_c_sheet import Sheet
from starter.bench.referrals_c_values import POOLS, Drawn


def lab_grid(d: Drawn, rng: random.Random) -> list[Image.Image]:
    s = Sheet(rng)
    s.text(90, 80, "PATHOLOGY & RESEARCH SAMPLE REQUEST", 40, "sans_bold")
    s.text(90, 140, f"Lab use only - {d.shown['accession']}", 22, "light")
    given, _, surname = d.shown["patient_name"].partition(" ")
    cells = [
        ("Surname / forename", f"{surname.upper()}, {given}"),
        ("D.o.B.", d.shown["date_of_birth"]),
        ("NHS no.", d.shown["nhs"]),
        (d.labels["participant_id"], d.shown["participant_id"]),
        (d.labels["referring_clinic"], d.shown["referring_clinic"]),
        (d.labels["clinician"], d.shown["clinician"]),
        (d.labels["referral_date"], d.shown["referral_date"]),
        ("Specimen collected", d.shown["other_date"]),
        ("Contact tel.", d.shown["phone"]),
        ("Home address", d.shown["address"]),
    ]
    y = _cells(s, cells, {"Home address", d.labels["referring_clinic"]})
    s.box((90, y, 1564, y + 200))
    s.text(98, y + 6, d.labels["reason"], 17, "sans")
    s.text(110, y + 60, d.shown["reason"], 32, "italic")
    y += 200
    s.box((90, y, 1564, y + 130))
    s.text(98, y + 6, d.labels["consent"], 17, "sans")
    yes, no = d.options
    s.check(120, y + 60, d.consent)
    at = s.text(170, y + 58, yes, 30, "sans")
    s.check(at + 90, y + 60, not d.consent)
    s.text(at + 140, y + 58, no, 30, "sans")
    return [s.image]


def _cells(s: Sheet, cells: list[tuple[str, str]], wide: set[str]) -> int:
    """Two cells to a row (a wide one takes its own row), label in the corner; the y below."""
    y, col = 220, 0
    for label, value in cells:
        if label in wide and col:
            y, col = y + 120, 0
        x, x1 = (90, 1564) if label in wide else (90 + col * 737, 827 + col * 737)
        s.box((x, y, x1, y + 120))
        s.text(x + 8, y + 6, label, 17, "sans")
        s.text(x + 20, y + 52, value, 32, "serif")
        col = 0 if label in wide else col ^ 1
        y += 0 if col else 120
    return y + (120 if col else 0)


def handwritten(d: Drawn, rng: random.Random) -> list[Image.Image]:
    s = Sheet(rng)
    s.text(120, 100, "Community referral form", 44, "serif_bold")
    s.text(120, 165, "Please complete in block capitals or clear handwriting", 22, "oblique")
    rows = d.rows(POOLS.handwritten_rows) + d.labelled(LABEL_ORDER)
    y = 280
    for label, value in rows:
        at = s.text(120, y, f"{label}:", 28, "sans")
        s.dots(at + 20, 1540, y + 40)
        s.hand(max(at + 40, 520), y - 4, value)
        y += 110
    y += 30
    at = s.text(120, y, f"{d.labels['consent']}:", 28, "sans")
    yes, no = d.options
    yes_at = max(at + 40, 700)
    yes_end = s.text(yes_at, y, yes, 30, "sans_bold")
    slash = s.text(yes_end + 10, y, "/", 30, "sans")
    no_end = s.text(slash + 20, y, no, 30, "sans_bold")
    if d.consent:
        s.strike(slash + 20, no_end, y + 18)
    else:
        s.strike(yes_at, yes_end, y + 18)
    s.text(120, y + 70, "(strike through whichever does not apply)", 20, "oblique")
    s.hand(900, 2050, d.shown["clinician"].split()[-1], 40)
    return [s.image]


_QUESTIONS = (
    "Is an interpreter needed at appointments?",
    "Does the patient need transport?",
    "Any known allergies?",
    "Has the patient had a fall in the last year?",
)


def questionnaire(d: Drawn, rng: random.Random) -> list[Image.Image]:
    s = Sheet(rng)
    s.text(100, 90, "Research clinic intake questionnaire", 42, "serif_bold")
    head = d.rows(POOLS.questionnaire_rows) + d.labelled(LABEL_ORDER)
    y = 200
    for label, value in head:
        at = s.text(100, y, f"{label}", 26, "sans_bold")
        s.text(max(at + 30, 560), y, value, 28, "serif")
        s.draw.line((560, y + 38, 1550, y + 38), fill=110, width=1)
        y += 72
    y += 40
    s.text(1240, y, "Yes", 28, "sans_bold")
    s.text(1400, y, "No", 28, "sans_bold")
    question = f"{d.labels['consent']} - does the patient agree?"
    rows = [(q, rng.random() < 0.5) for q in _QUESTIONS]
    rows.insert(rng.randint(0, len(rows)), (question, d.consent))
    for text, answer in rows:
        y += 80
        s.text(100, y, text, 26, "serif")
        s.check(1250, y, answer)
        s.check(1405, y, not answer)
    return [s.image]


LABEL_ORDER = ("participant_id", "referral_date", "referring_clinic", "clinician", "reason")
