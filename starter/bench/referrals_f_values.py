"""The sixth generator's wordings: labels, clinics, reasons, date styles and consent.

Its own label wordings (``LABELS``; ``OTHER`` for what is not a field),
clinics, reasons and date styles (``DATES``), written without looking at the
other generators'; how a page shows consent (``Consent``, ``draw_consent``).
What one referral draws from them is ``starter.bench.referrals_f_draw``'s.
Tables are kept as text, one entry a line.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import partial


def pool(text: str) -> tuple[str, ...]:
    """A text's lines, stripped: one entry a line."""
    return tuple(line.strip() for line in text.strip().splitlines())


def table(text: str) -> dict[str, tuple[str, ...]]:
    """``key: a | b`` lines as ``{key: (a, b, ...)}``, a key's lines joined."""
    found: dict[str, tuple[str, ...]] = {}
    for key, row in (line.split(":", 1) for line in pool(text)):
        found[key.strip()] = found.get(key.strip(), ()) + tuple(w.strip() for w in row.split("|"))
    return found


def words(text: str) -> list[str]:
    """A text's words (ruff would have a list literal, which is longer to read)."""
    return text.split()


LABELS = table("""
    referral_date: Request dated | Dt. of referral | Date sent to research | Date of writing
    referral_date: Referral dispatched | Form completed on | Referral sent (date) | When referred
    participant_id: Trial no. | Enrolment code | Pt. study ID | Cohort member no.
    participant_id: Study subject no. | Rand. code | Study volunteer code
    participant_id: Research participant # | Study log no.
    consent: Research contact agreed | Consent to approach | Permission for study team to call
    consent: OK to contact re research | Research consent obtained
    referring_clinic: From (practice) | Sending practice | Practice / clinic name
    referring_clinic: Ordering facility | Referring surgery | Source practice
    referring_clinic: Place of referral | Sending unit
    clinician: Ordering provider | Responsible GP | Clinician completing form
    clinician: Name of referring GP | Referring medic | Completed by (clinician)
    clinician: Doctor's name | Authorising clinician
    reason: Referral reason / Dx | Query | Main problem | What is the concern?
    reason: Clinical concern | Question for research team | Complaint | Problem in brief
    reason: Working diagnosis
""")
#: The other things a page labels (not fields: free to be as common as they are).
OTHER = table("""
    patient_name: Patient | Name | Patient name | Surname, forename
    date_of_birth: DOB | Date of birth | D.O.B. | Born
    mrn: MRN | Hosp. no. | Hospital number | Unit no.
    phone: Tel. | Phone | Contact no. | Mobile
    address: Address | Home address | Residence
    next_of_kin: Next of kin | NOK | Emergency contact
    appointment: Appt. | Appointment offered | Seen on | Next review
""")  # fmt: skip
UK_CLINICS = pool("""
    Quarrybank Medical Centre
    Wexcombe Surgery
    Elmstead Road Health Centre
    Kittiwake Bay Practice
    Greyfriars Medical Group
    Thornbury Vale Surgery
    St Brannock's Health Centre
    Ashwell & Druce Partnership
    Hollins Brook Medical Practice
    Marram Dunes Family Health
    Blackthorn Primary Care
    Oakhanger Practice
""")
US_CLINICS = pool("""
    Mapleton Internal Medicine Associates
    Cedar Ridge Community Health
    Larkspur Valley Family Practice
    Prairie Hollow Pediatrics
    Bluestem Primary Care
    Ridgeway Family Physicians
    Three Forks Medical Group
    Sycamore Bend Clinic
""")
CLINICS = UK_CLINICS + US_CLINICS
REASONS = pool("""
    Exertional breathlessness, ? interstitial lung disease
    Nocturnal leg cramps unresponsive to stretching
    Raised ferritin with normal transferrin saturation
    Intermittent tingling in both hands, worse at night
    Poorly controlled asthma despite step 3 therapy
    Recurrent falls in the last six months
    New-onset atrial fibrillation, rate controlled
    Unexplained weight loss of 6 kg since autumn
    Microscopic haematuria on two dipstick tests
    Daytime somnolence, suspected sleep apnoea
    Chronic low back pain with left-sided sciatica
    Memory complaints reported by family
    PSA rising on repeat testing
    Hoarse voice persisting beyond four weeks
    Psoriatic plaques not settling on topical treatment
    Type 2 diabetes with HbA1c above target
    Palpitations on exertion, normal resting ECG
    Morning joint stiffness lasting over an hour
""")
#: Where the referral goes: a distractor for the referring clinic.
UNITS = pool("""
    Clinical Research Facility, Northgate General Hospital
    Research Office, St Aldhelm's Hospital
    Clinical Trials Office, Lakeshore University Medical Center
    Early Phase Unit, Riverside Teaching Hospital
""")
_ROMAN = words("I II III IV V VI VII VIII IX X XI XII")


def _nth(day: int) -> str:
    tail = "th" if 10 < day < 14 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{tail}"


def _written(pattern: str, day: date) -> str:
    """``day`` as ``pattern`` spells it: {d} the day, {dd} with a zero, {m} {mm} the month,
    {b} {B} its name, {R} in Roman figures, {A} the weekday, {Y} {yy} the year, {nth} 3rd."""
    names = {"b": f"{day:%b}", "B": f"{day:%B}", "A": f"{day:%A}", "R": _ROMAN[day.month - 1]}
    numbers = {"dd": f"{day:%d}", "mm": f"{day:%m}", "yy": f"{day:%y}", "nth": _nth(day.day)}
    return pattern.format(d=day.day, m=day.month, Y=day.year, **names, **numbers)


#: How a date is written, by style name.
DATES: dict[str, Callable[[date], str]] = {
    name: partial(_written, pattern)
    for name, (pattern,) in table("""
        ordinal: {nth} {B} {Y}
        long: {d} {B} {Y}
        weekday: {A} {d} {B} {Y}
        dmy_short: {dd}/{mm}/{yy}
        dmy: {dd}/{mm}/{Y}
        dotted: {dd}.{mm}.{Y}
        roman: {d}.{R}.{Y}
        dash_mon: {dd}-{b}-{Y}
        short_mon: {d} {b} {yy}
        iso: {Y}-{mm}-{dd}
        us_abbr: {b} {d}, {Y}
        us_long: {B} {d}, {Y}
        us: {mm}/{dd}/{Y}
        us_bare: {m}/{d}/{Y}
    """).items()
}  # fmt: skip
UK_STYLES = (
    "ordinal",
    "long",
    "dmy_short",
    "dmy",
    "dotted",
    "roman",
    "dash_mon",
    "short_mon",
    "iso",
)
US_STYLES = ("us_abbr", "us_long", "us", "us_bare", "iso")
LETTER_STYLES = ("ordinal", "long", "weekday", "dmy", "short_mon")

#: A sentence's kind: its truth and its wordings ({who} the patient, {their} a pronoun).
CONSENT_SENTENCES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "affirm": (True, pool("""
        {who} has agreed to be contacted about the study.
        {who} is happy for the research team to get in touch.
        {who} gave verbal consent to this referral today.
        {who} has no objection to being approached by the trial team.
        Consent to pass {their} details to the research team was obtained.
    """)),
    "refuse": (False, pool("""
        {who} declined to be contacted by the research team.
        {who} does not consent to being approached about research.
        {who} has asked not to be contacted regarding the study.
        {who} was unwilling to give consent for research contact.
        Consent to share {their} details for research was refused.
    """)),
}  # fmt: skip
#: A ticked statement's pair: (affirms, denies).
CONSENT_STATEMENTS = tuple(tuple(pair.split(" / ")) for pair in pool("""
    Patient agrees to be contacted by the research team / Patient does NOT agree to be contacted
    Consent for research approach obtained / Patient declined research approach
    Happy for study team to telephone / Not happy for study team to telephone
    Patient has given consent to share these details / Patient has refused consent to share
"""))  # fmt: skip


@dataclass(frozen=True)
class Consent:
    """How a page shows consent: ``mode`` "ticked" (a statement's box), "yes_no" (one of
    a pair), "sentence", or "absent" (``blank``: the Yes/No boxes printed, none marked)."""

    truth: bool | None
    mode: str
    sentence: str = ""
    statements: tuple[str, ...] = ()
    blank: bool = False


def draw_consent(rng: random.Random, *, marks: bool) -> Consent:
    """Given or refused about evenly, absent about one in eight; marked answers only
    where the page has boxes (``marks``)."""
    roll, truth = rng.random(), rng.random() < 0.5
    if roll < 0.13:
        return Consent(None, "absent", blank=marks and rng.random() < 0.5)
    if marks and roll < 0.43:
        affirm, deny = rng.choice(CONSENT_STATEMENTS)
        both = (affirm, deny) if rng.random() < 0.6 else ((affirm,) if truth else (deny,))
        return Consent(truth, "ticked", affirm if truth else deny, both)
    if marks and roll < 0.72:
        return Consent(truth, "yes_no")
    return Consent(
        truth, "sentence", rng.choice(CONSENT_SENTENCES["affirm" if truth else "refuse"][1])
    )


def said(consent: Consent, who: str, their: str) -> str:
    """A consent sentence with its patient filled in."""
    return consent.sentence.format(who=who, their=their)
