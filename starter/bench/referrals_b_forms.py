"""The second generator's layout families: four to tune on, four held out (``referrals_b``).

Tuning: ``letter`` (values inside its sentences, the date and signature where
letters put them), ``table`` (a ruled label | value table), ``boxed`` (the
label above the value in each box, consent as ticked statements) and
``two_column`` (two columns of label: value lines). Held out: ``eform`` (a
monospace printout with dot leaders), ``banner`` (labels in a header row, the
values in the row under it), ``memo`` (a fax cover, then a memo in prose) and
``sectioned`` (values pushed to the right margin, far from their labels).
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from starter.bench.referrals_b_held import checklist, email
from starter.bench.referrals_b_pages import (
    Sheet,
    consent_options,
    consent_sentence,
    consent_statements,
    consent_word,
    font,
)
from starter.bench.referrals_b_values import Drawn

_ADDRESSES = ("14 Harbour Row, Exeter EX1 2AB", "2 Mill Lane, Leeds LS6 1QP", "9 Kings Road, Bath")


def _paragraph(
    sheet: Sheet, x: float, y: float, text: str, size: int = 30, width: int = 1380
) -> float:
    """``text`` wrapped at ``width`` px; returns the y under it."""
    line = ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and sheet.draw.textlength(trial, font=font(sheet.face, size)) > width:
            sheet.text(x, y, line, size)
            y, line = y + size * 1.5, word
        else:
            line = trial
    if line:
        sheet.text(x, y, line, size)
    return y + size * 1.9


def _pair(d: Drawn, name: str) -> tuple[str, str]:
    return d.labels[name], d.shown[name]


def _letter(d: Drawn) -> list[Image.Image]:
    s, rng = Sheet("serif"), d.rng
    s.text(120, 110, d.shown["referring_clinic"], 46, "serif_bold")
    s.text(120, 178, rng.choice(_ADDRESSES), 26)
    s.text(120, 214, "Tel 01632 960 414    Fax 01632 960 415", 26)
    s.text(120, 300, f"Our ref: {rng.choice(('HW', 'RM', 'KB'))}/{rng.randrange(1000, 9999)}", 26)
    dated = d.shown["referral_date"]
    s.right(1530, 300, dated if rng.random() < 0.5 else f"{d.labels['referral_date']}: {dated}")
    s.text(120, 380, "Research Referrals Office", 30)
    s.text(120, 420, "Clinical Trials Unit, Riverside Hospital", 30)
    s.text(120, 540, rng.choice(("Dear Dr Marsh,", "Dear Colleague,")), 30)
    s.text(
        120, 610, f"Re: {d.shown['patient']}, {d.labels['dob']} {d.shown['dob']}", 30, "serif_bold"
    )
    y = 680.0
    pid_label, pid = _pair(d, "participant_id")
    if rng.random() < 0.5:
        s.text(120, y, f"{pid_label}: {pid}      {d.labels['nhs']}: {d.shown['nhs']}", 30)
        opening = "I would be grateful if you could see this patient"
        y += 80
    else:
        opening = f"I would be grateful if you could see this patient ({pid_label} {pid})"
    if rng.random() < 0.5:
        y = _paragraph(s, 120, y, f"{opening} regarding {d.shown['reason'].lower()}.")
    else:
        y = _paragraph(s, 120, y, f"{opening} at your research clinic.")
        y = _paragraph(s, 120, y, f"{d.labels['reason']}: {d.shown['reason']}.")
    y = _paragraph(s, 120, y, f"I last saw them in clinic on {d.shown['other_date']}.")
    y = _paragraph(s, 120, y, consent_sentence(d))
    s.text(120, y + 40, "Yours sincerely,", 30)
    s.text(120, y + 200, d.shown["clinician"], 30)
    s.text(120, y + 245, rng.choice(("General Practitioner", "Consultant Physician")), 26)
    d.meta["consent_as"] = "sentence"
    return [s.image]


def _table(d: Drawn) -> list[Image.Image]:
    s, rng = Sheet("sans"), d.rng
    s.text(120, 120, "REFERRAL FOR RESEARCH ASSESSMENT", 40, "sans_bold")
    s.text(120, 185, d.shown["referring_clinic"], 28)
    names = ["dob", "nhs", "participant_id", "referral_date", "clinician", "referring_clinic"]
    names += ["reason", "other_date"]
    rng.shuffle(names)
    rows = [("patient", d.shown["patient"]), *((n, d.shown[n]) for n in names)]
    rows.append(("consent", consent_word(d)))
    y = 280
    for name, value in rows:
        s.rect((120, y, 640, y + 76))
        s.rect((640, y, 1534, y + 76))
        s.text(138, y + 22, d.labels[name], 28)
        s.text(660, y + 22, value, 28)
        y += 76
    d.meta["consent_as"] = "word"
    return [s.image]


def _boxed(d: Drawn) -> list[Image.Image]:
    s, rng = Sheet("cond"), d.rng
    s.text(120, 110, "Outpatient Referral - Research Clinic", 42, "sans_bold")
    names = ["patient", "dob", "participant_id", "nhs", "referral_date", "other_date"]
    names += ["clinician", "referring_clinic"]
    rng.shuffle(names)
    for n, name in enumerate(names):
        x, y = 120 + (n % 2) * 712, 220 + (n // 2) * 140
        s.rect((x, y, x + 700, y + 128))
        s.text(x + 14, y + 10, d.labels[name].upper(), 22)
        s.text(x + 14, y + 60, d.shown[name], 32)
    y = 220 + 4 * 140
    s.rect((120, y, 1532, y + 150))
    s.text(134, y + 10, d.labels["reason"].upper(), 22)
    s.text(134, y + 60, d.shown["reason"], 32)
    s.text(120, y + 200, "CONSENT", 26, "sans_bold")
    consent_statements(s, 130, y + 250, d)
    d.meta["consent_as"] = "statements"
    return [s.image]


def _two_column(d: Drawn) -> list[Image.Image]:
    s = Sheet("sans")
    s.text(120, 110, "Referral", 48, "sans_bold")
    s.text(120, 200, "Patient details", 30, "sans_bold")
    s.text(880, 200, "Referrer details", 30, "sans_bold")
    left = ["patient", "dob", "nhs", "participant_id"]
    right = ["clinician", "referring_clinic", "referral_date", "other_date"]
    for column, x in ((left, 120), (right, 880)):
        for n, name in enumerate(column):
            s.text(x, 270 + n * 64, f"{d.labels[name]}: {d.shown[name]}", 26)
    s.text(120, 560, f"{d.labels['reason']}: {d.shown['reason']}", 28)
    consent_options(s, 120, 650, d)
    d.meta["consent_as"] = "options"
    return [s.image]


def _eform(d: Drawn) -> list[Image.Image]:
    s = Sheet("mono")
    s.text(110, 100, "E-REFERRAL SERVICE    PRINTOUT v2.3", 30)
    s.text(110, 150, f"PRINTED: {d.shown['other_date']}", 26)
    rows = ["referral_date", "participant_id", "patient", "dob", "nhs", "clinician"]
    rows += ["referring_clinic", "reason"]
    y = 260
    for name in rows:
        s.text(110, y, f"{d.labels[name].upper():.<26}: {d.shown[name]}", 27)
        y += 60
    s.text(110, y + 30, f"{d.labels['consent'].upper():.<26}: {consent_word(d).upper()}", 27)
    d.meta["consent_as"] = "word"
    return [s.image]


def _banner(d: Drawn) -> list[Image.Image]:
    s = Sheet("sans")
    s.text(120, 110, d.shown["referring_clinic"].upper(), 36, "sans_bold")
    s.text(120, 165, "Research clinic referral", 28)
    for row, names in enumerate((("patient", "dob", "participant_id", "referral_date"),
                                 ("clinician", "referring_clinic", "other_date"))):  # fmt: skip
        y, width = 260 + row * 220, 1412 // len(names)
        for n, name in enumerate(names):
            x = 120 + n * width
            s.rect((x, y, x + width, y + 64))
            s.rect((x, y + 64, x + width, y + 150))
            s.text(x + 12, y + 18, d.labels[name], 24, "sans_bold")
            s.text(x + 12, y + 88, d.shown[name], 26)
    s.text(120, 730, d.labels["reason"], 28, "sans_bold")
    s.text(120, 780, d.shown["reason"], 28)
    consent_options(s, 120, 880, d)
    d.meta["consent_as"] = "options"
    return [s.image]


def _memo(d: Drawn) -> list[Image.Image]:
    cover = Sheet("sans")
    cover.text(120, 120, "FAX", 72, "sans_bold")
    for n, (label, value) in enumerate((("To", "Study coordinator"),
                                        ("From", d.shown["referring_clinic"]),
                                        ("Date sent", d.shown["other_date"]),
                                        ("Pages", "2 (including this one)"))):  # fmt: skip
        cover.text(120, 300 + n * 80, f"{label}: {value}", 32)
    s = Sheet("serif")
    s.text(120, 110, "MEMORANDUM", 44, "serif_bold")
    s.text(120, 200, f"From: {d.shown['clinician']}, {d.shown['referring_clinic']}", 30)
    s.text(120, 250, f"{d.labels['referral_date']}: {d.shown['referral_date']}", 30)
    s.text(120, 300, f"Re: {d.labels['participant_id']} {d.shown['participant_id']}", 30)
    body = (
        f"Please see {d.shown['patient']} (born {d.shown['dob']}) for the study. "
        f"The main concern is {d.shown['reason'].lower()}. {consent_sentence(d)}"
    )
    y = _paragraph(s, 120, 400, body)
    s.text(120, y + 120, d.shown["clinician"], 30)
    d.meta["consent_as"] = "sentence"
    return [cover.image, s.image]


def _sectioned(d: Drawn) -> list[Image.Image]:
    s = Sheet("cond")
    s.text(120, 100, "Referral to the research team", 40, "sans_bold")
    sections = (("PATIENT", ("patient", "dob", "nhs", "participant_id")),
                ("REFERRAL", ("referral_date", "reason", "other_date")),
                ("REFERRER", ("clinician", "referring_clinic")))  # fmt: skip
    y = 200
    for title, names in sections:
        s.text(120, y, title, 28, "sans_bold")
        y += 60
        for name in names:
            s.text(150, y, d.labels[name], 28)
            s.right(1530, y, d.shown[name], 28)
            y += 56
        y += 30
    s.text(120, y, "CONSENT", 28, "sans_bold")
    consent_statements(s, 150, y + 60, d)
    d.meta["consent_as"] = "statements"
    return [s.image]


FAMILIES: dict[str, Callable[[Drawn], list[Image.Image]]] = {
    "letter": _letter,
    "table": _table,
    "boxed": _boxed,
    "two_column": _two_column,
    "eform": _eform,
    "banner": _banner,
    "memo": _memo,
    "sectioned": _sectioned,
    "checklist": checklist,
    "email": email,
}
