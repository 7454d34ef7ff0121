"""The seventh generator's screens and notes: a record system's screen print, a clinic note.

- ``ehr_screen``: a health record's referral screen, printed: a title bar, tabs,
  a patient banner (surname first, small grey labels), the referral's fields as
  small-capital labels over bold values, consent as a ticked box or radio
  buttons, and the printout's footer with its own date.
- ``clinic_note``: a clinic's note in S/O/A/Plan form under a patient sticker
  pasted askew; the referral's date, referrer and study number each printed
  before its label ("17/03/2025 (date referred)"); the reason inside the Plan
  paragraph, consent (if any) in a sentence there too.
"""

from __future__ import annotations

import random

from starter.bench.referrals_g_page import (
    GREY,
    INK,
    Page,
    face,
    radio,
    show_consent,
    small_caps,
    sticker,
)
from starter.bench.referrals_g_values import Drawn

__all__ = ["clinic_note", "ehr_screen"]

_WHITE = (255, 255, 255)
_TABS = ("Summary", "Referrals", "Results", "Letters", "Medication")
_SUBJECTIVE = (
    "Attends with daughter. Symptoms for some months, now sleeping poorly.",
    "Seen alone. Reports gradual change since the winter; managing at home.",
    "Telephone review first, then seen in person today. Keen to be investigated.",
)
_OBJECTIVE = (
    "BP 148/92, pulse 78 regular, BMI 31. Chest clear.",
    "Alert and orientated. Heart sounds normal, no peripheral oedema.",
    "Gait steady. Observations within normal limits today.",
)


def ehr_screen(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A record system's referral screen as printed: chrome, banner, fields, footer; now and
    then over two pages, consent and the audit trail on the second."""
    first, s = Page(), drawn.shown
    _chrome(first, drawn)
    y = _fields(first, drawn)
    pages = [first] if rng.random() < 0.6 else [first, Page()]
    if len(pages) == 2:
        _chrome(pages[1], drawn)
        y = pages[1].put(60, 330, "Research and audit", 30, "Sans-Bold")[3] + 50
    y = _consent_panel(pages[-1], y, drawn)
    if len(pages) == 2:
        trail = [f"{s['letter_date']} 14:22  printed by {s['other_person_2']}",
                 f"{s['referral_date']}  referral created by {s['clinician']}"]  # fmt: skip
        for entry in trail:
            y = pages[1].put(60, y + 30, entry, 24, "SansMono", INK, 1500)[3]
    for n, page in enumerate(pages, 1):
        printed = f"Printed by {s['other_person_2']} on {s['letter_date']} 14:22"
        page.put(40, 2250, printed, 20, "Sans", GREY, 900)
        page.put(40, 2200, f"Clinic fax {s['fax']}", 20, "Sans", GREY)
        page.flush(1614, 2250, f"Page {n} of {len(pages)}", 20)
    return pages


def _chrome(page: Page, drawn: Drawn) -> None:
    """The title bar, the tabs (Referrals open) and the patient banner."""
    s, lab = drawn.shown, drawn.labels
    page.draw.rectangle((0, 0, page.width, 72), fill=(38, 50, 72))
    page.put(40, 22, f"CareVue EPR 7.4  |  {s['referring_clinic']}", 24, "Sans", _WHITE, 1300)
    x = 40
    for tab in _TABS:
        width = int(face("Sans-Bold", 22).getlength(tab)) + 36
        active = tab == "Referrals"
        page.frame((x, 88, x + width, 136), 1, _WHITE if active else (220, 224, 230))
        page.put(x + 18, 100, tab, 22, "Sans-Bold" if active else "Sans", INK)
        x += width + 8
    page.draw.rectangle((40, 150, 1614, 300), fill=(228, 234, 242))
    page.put(60, 164, s["patient_name"], 32, "Sans-Bold", INK, 900)
    banner = [("date_of_birth", "DOB"), ("mrn", lab["mrn"]), ("other_id", lab["other_id"]),
              ("phone", lab["phone"])]  # fmt: skip
    for n, (name, label) in enumerate(banner):
        small_caps(page, 60 + 390 * n, 216, label, 19, GREY, 360)
        page.put(60 + 390 * n, 244, s[name], 24, "Sans-Bold", INK, 370)


def _fields(page: Page, drawn: Drawn) -> int:
    """The referral's fields, small-capital labels over bold values; the y below."""
    s, lab = drawn.shown, drawn.labels
    page.put(60, 330, f"Referral  |  {s['study']}", 30, "Sans-Bold", INK, 1500)
    fields = [("referral_date", "referral_date"), ("appointment", "appointment"),
              ("participant_id", "participant_id"), ("gp", "other_person_1"),
              ("referring_clinic", "referring_clinic"), ("address", "address"),
              ("clinician", "clinician")]  # fmt: skip
    y = 400
    for n, (label, name) in enumerate(fields):
        x = 60 if n % 2 == 0 else 850
        small_caps(page, x, y, lab[label], 19, GREY, 720)
        page.put(x, y + 26, s[name], 26, "Sans-Bold", INK, 720)
        y += 96 if n % 2 else 0
    y += 96
    small_caps(page, 60, y, lab["reason"], 19, GREY, 1500)
    page.put(60, y + 26, s["reason"], 26, "Sans-Bold", INK, 1500)
    return y + 120


def _consent_panel(page: Page, y: int, drawn: Drawn) -> int:
    """Consent as the screen shows it: radio buttons, a ticked box, or a note; the y below."""
    consent = drawn.consent
    if consent.mode == "ringed" or consent.blank:
        return _radios(page, 60, y, drawn)
    if consent.mode == "absent":
        return y
    page.frame((40, y - 20, 1614, y + 150), 1)
    return max(y + 170, show_consent(page, 70, y, 1500, consent, drawn.shown["who"], "tick"))


def _radios(page: Page, x: int, y: int, drawn: Drawn) -> int:
    """The screen's consent question, each option a radio button (none chosen if blank)."""
    consent = drawn.consent
    page.put(x, y, consent.sentence, 26, "Sans", INK, 900)
    at = 1020
    for n, option in enumerate(consent.options):
        radio(page, at, y + 2, consent.mode == "ringed" and consent.truth is (n == 0))
        at = page.put(at + 40, y, option, 26, "Sans")[2] + 70
    return y + 70


def clinic_note(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A clinic note under a patient sticker: labels after values, the reason in the Plan."""
    page, s, lab = Page(), drawn.shown, drawn.labels
    page.put(110, 90, s["referring_clinic"], 34, "Serif-Bold", INK, 800)
    page.put(110, 146, "Outpatient clinic note", 26, "Serif-Italic", GREY)
    page.put(110, 190, f"Tel {s['clinic_phone']}", 22, "Sans", GREY)
    page.put(110, 224, f"Fax {s['fax']}", 22, "Sans", GREY)
    lines = [s["patient_name"], f"DOB {s['date_of_birth']}", f"{lab['mrn']} {s['mrn']}",
             f"{lab['other_id']} {s['other_id']}", s["address"]]  # fmt: skip
    sticker(page, 960, 80, lines, rng)
    y = 440
    after = [(s["referral_date"], lab["after_referral_date"]),
             (s["clinician"], lab["after_clinician"]),
             (s["participant_id"], f"{s['study']}, {lab['after_participant_id']}")]  # fmt: skip
    for value, label in after:
        right = page.put(110, y, value, 28, "Sans-Bold", INK, 1000)[2]
        page.put(right + 16, y, f"({label})", 24, "Sans", GREY, 1540 - right)
        y += 54
    y += 30
    consent = drawn.consent
    said = consent.sentence.format(who=s["who"]) if consent.mode in ("agrees", "refuses") else ""
    plan = (
        f"Referred today for {s['reason']}; letter to follow to {s['other_person_1']} (GP). "
        f"{said} Review in clinic on {s['appointment']}; patient's number {s['phone']}."
    )
    soap = (("S:", rng.choice(_SUBJECTIVE)), ("O:", rng.choice(_OBJECTIVE)),
            ("A:", "As above; see plan."), ("Plan:", " ".join(plan.split())))  # fmt: skip
    for head, text in soap:
        page.put(110, y, head, 28, "Serif-Bold")
        y = page.lines(230, y, 1300, text, 28, "Serif") + 24
    page.put(110, y + 60, s["clinician"], 28, "Serif-BoldItalic", INK, 1300)
    page.put(110, y + 110, f"Dictated; typed {s['letter_date']} by {s['other_person_2']}", 22,
             "Sans", GREY, 1300)  # fmt: skip
    return [page]
