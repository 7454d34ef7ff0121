"""The sixth generator's prose: a GP's letter, and a fax (cover sheet, then the form).

The letter has a letterhead (the practice, its address and numbers, a
partner), the recipient and the date, a bold "Re:" block with the patient's
identifiers, then paragraphs that carry the reason, the participant ID, the
consent (or nothing of it) among other dates, a next of kin and a phone
number, and a signature block naming the clinician. The fax's two pages each
carry the machine's header line with its own stamp and both fax numbers; the
cover sheet's date is when it was sent, the form's is the referral's.
"""

from __future__ import annotations

import random

from starter.bench.referrals_f_forms import Drawn, cells, consent_block
from starter.bench.referrals_f_page import GREY, INK, Grid, Page, face, grid
from starter.bench.referrals_f_values import said

#: Openers that carry the reason ({reason} starts lower case), and the participant ID.
_OPENERS = (
    "Thank you for seeing {name}, whom I am referring with {reason}.",
    "I would be grateful for your assessment of {name} regarding {reason}.",
    "Please could you see {name}? The clinical question is {reason}.",
    "I am writing about {name}, who has {reason}, and would value your opinion.",
)
_STUDY = (
    "{who} is already enrolled in the {study} study, participant number {pid}.",
    "For your records, {their} {study} trial ID is {pid}.",
    "{who} takes part in {study} (study no. {pid}) and is keen to continue.",
)
_HISTORY = (
    "I last saw {them} on {seen}; bloods then were unremarkable. {their_cap} {kin}, "
    "{kin_name}, usually comes to appointments and can be reached through {them} on {phone}.",
    "{who} was reviewed here on {seen} and an appointment has been offered for {appt}. "
    "The best number is {phone}; {their} {kin} {kin_name} helps with transport.",
)
_CLOSINGS = ("Yours sincerely,", "With kind regards,", "Yours faithfully,", "Best wishes,")


def gp_letter(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A letter on practice paper; its values in sentences, the clinician in the sign-off."""
    s, page = drawn.shown, Page()
    style = rng.choice(("Serif", "Sans"))
    y = _letterhead(page, drawn, rng)
    for n, line in enumerate([f"Dr {s['other_person_2']}", *s["unit"].split(", ")]):
        page.put(110, y + n * 36, line, 26, style)
    page.flush(1544, y, s["referral_date"], 26, style)
    page.flush(1544, y + 40, f"Our ref: {s['order']}", 20, "Sans")
    y += 200
    dear = rng.choice(("Dear colleague,", f"Dear Dr {s['other_person_2'].split()[-1]},"))
    page.put(110, y, dear, 26, style)
    y = _re_block(page, drawn, y + 70)
    surname = s["patient_name"].split()[-1]
    name = f"{s['title']} {surname}"
    who, their = rng.choice(((name, s["their"]), (s["who"], s["their"])))
    them = "him" if s["who"] == "He" else "her"
    reason = s["reason"][0].lower() + s["reason"][1:]
    fill = {
        "name": name, "reason": reason, "who": who, "their": their, "them": them,
        "their_cap": their.capitalize(), "study": s["study"], "pid": s["participant_id"],
        "seen": s["seen"], "appt": s["appointment"], "phone": s["phone"], "kin": s["kin"],
        "kin_name": s["other_person_1"],
    }  # fmt: skip
    paragraphs = [rng.choice(t).format(**fill) for t in (_OPENERS, _STUDY, _HISTORY)]
    if drawn.consent.mode == "sentence":
        paragraphs.insert(rng.randint(2, 3), said(drawn.consent, s["who"], s["their"]))
    for text in paragraphs:
        y = page.lines(110, y, 1434, text, 27, style) + 18
    return [_sign_off(page, drawn, y + 20, rng, style)]


def _letterhead(page: Page, drawn: Drawn, rng: random.Random) -> int:
    """The practice's name, address, numbers and a partner; the y below its rule."""
    s = drawn.shown
    lines = [
        (s["referring_clinic"], 44, "Serif-Bold"),
        (f"The Surgery, {rng.randint(1, 90)} Station Road", 22, "Sans"),
        (f"Tel {s['clinic_phone']}   Fax {s['clinic_fax']}", 22, "Sans"),
        (f"Dr {s['other_person_3']} & Partners", 20, "Sans-Oblique"),
    ]
    centred = rng.random() < 0.5
    y = 70
    for text, size, style in lines:
        if centred:
            page.put(827 - int(face(style, size).getlength(text)) // 2, y, text, size, style)
        else:
            page.flush(1544, y, text, size, style)
        y += size + 22
    page.draw.line([(110, y + 10), (1544, y + 10)], INK, 3)
    return y + 60


def _re_block(page: Page, drawn: Drawn, y: int) -> int:
    """The bold "Re:" lines: the patient, the birth date and the numbers, the address."""
    s, lab = drawn.shown, drawn.labels
    page.put(110, y, f"Re: {s['title']} {s['patient_name']}", 27, "Sans-Bold")
    page.put(900, y, f"DOB {s['date_of_birth']}", 27, "Sans-Bold", INK, 640)
    numbers = f"{lab['mrn']} {s['mrn']}    {lab['other_id']} {s['other_id']}"
    page.put(170, y + 44, numbers, 24, "Sans-Bold", INK, 1370)
    page.put(170, y + 86, s["address"], 24, "Sans", INK, 1370)
    return y + 160


def _sign_off(page: Page, drawn: Drawn, y: int, rng: random.Random, style: str) -> Page:
    """The closing, a pen's squiggle, the clinician's name, role and number, a cc line."""
    s = drawn.shown
    page.put(110, y, rng.choice(_CLOSINGS), 26, style)
    points = [(140 + n * 28, y + 110 + rng.randint(-28, 28)) for n in range(12)]
    page.draw.line(points, (28, 42, 128), 4)
    page.put(110, y + 180, s["clinician"], 27, "Sans-Bold")
    page.put(110, y + 222, rng.choice(("General Practitioner", "GP Partner", "Salaried GP")), 22)
    page.put(110, y + 258, s["npi"], 20, "Sans", GREY)
    page.put(110, y + 320, f"cc: {s['title']} {s['patient_name']} (patient)", 20, "Sans", GREY)
    return page


def fax_referral(drawn: Drawn, rng: random.Random) -> list[Page]:
    """A cover sheet, then the referral form, each under the fax machine's header line."""
    s = drawn.shown
    cover, form = Page(), Page()
    for n, page in enumerate((cover, form), 1):
        header = f"{s['fax_stamp']}  FROM {s['clinic_fax']}  TO {s['unit_fax']}  P.{n:03d}/002"
        page.put(40, 28, header, 20, "SansMono", INK, 1574)
    cover.put(110, 120, rng.choice(("FAX", "FACSIMILE", "Fax cover sheet")), 64, "Sans-Bold")
    meta = [
        ("To", f"Dr {s['other_person_2']}", 2),
        ("Organisation", s["unit"], 2),
        ("Fax", s["unit_fax"], 1),
        ("Pages", "2 (incl. this sheet)", 1),
        ("From", s["referring_clinic"], 2),
        ("Date", s["sent"], 1),
        ("Re", "Research referral", 1),
    ]
    y = grid(cover, 260, Grid(110, 1434, "run", 2, 64, 24, 26), meta)
    y = cover.lines(110, y + 40, 1434, "Please find the referral form for the above attached.")
    notice = ("CONFIDENTIAL: this fax is meant only for the addressee. If it has reached you in "
              "error, please telephone the sender and destroy all pages.")  # fmt: skip
    cover.lines(110, max(y + 60, 1900), 1434, notice, 20, "Sans")
    return [cover, _fax_form(form, drawn, rng)]


def _fax_form(page: Page, drawn: Drawn, rng: random.Random) -> Page:
    """The form the cover sheet announces: a ruled table or "Label: value" lines."""
    s = drawn.shown
    title = rng.choice(("RESEARCH STUDY REFERRAL", "REFERRAL FOR STUDY REVIEW"))
    page.put(110, 110, title, 36, "Sans-Bold")
    how = rng.choice(("table", "run"))
    spec = (
        "patient_name:2 date_of_birth mrn other_id phone address:2 referral_date"
        " participant_id referring_clinic:2 clinician:2 reason:2 appointment"
    )
    y = grid(
        page, 200, Grid(110, 1434, how, 2, 70 if how == "table" else 60, 20, 26), cells(drawn, spec)
    )
    y = consent_block(page, 120, y + 40, 1400, drawn)
    page.put(110, y + 60, f"Signed: ____________________   {s['clinician']}", 24)
    return page
