"""What the fourth referral generator prints: wordings, people, sites, identifiers, dates.

Written blind (nothing under ``activities/`` read, nor the fields guide) and
chosen to differ from the other three generators' pools; the tests check that
no label wording, clinic or reason is shared. Wordings are the ones GPs,
hospital clinicians, clinic admins and research coordinators in the UK,
Ireland, the US, Canada, Australia and New Zealand print. The truth keeps the
referral date as ISO, consent as a boolean (left out when the page carries no
consent evidence at all: a careful reader records it as unknown), and every
other field exactly as printed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from starter.bench.referral_files import DrawnValues, page_identifiers, referral_truth

LABELS: dict[str, tuple[str, ...]] = {
    "participant_id": (
        "Trial subject no", "Pt study code", "Registry number", "Randomisation no.",
        "Study enrolment code", "Trial ID#", "PIC / study number", "Research participant ref",
    ),
    "referral_date": (
        "Date of letter", "Date written", "Referral submitted", "Referral written",
        "Date of this request",
        "Letter date",
    ),
    "referring_clinic": (
        "Referring organisation", "Practice / clinic", "Sending clinic", "Source of referral",
        "Referrer's practice", "From (site)",
    ),
    "clinician": (
        "Name of referrer", "Referring GP", "Health professional", "Referring provider",
        "Signed (referrer)", "Requesting doctor",
    ),
    "reason": (
        "Reason for this referral", "Presenting complaint", "Working diagnosis / query",
        "Main concern", "Referral question", "Problem",
    ),
    "consent": (
        "Research data sharing", "Sharing with study team", "Patient permission",
        "Authorisation to release", "Consent status",
    ),
}  # fmt: skip
#: Distractor labels: identifiers and dates that are not the wanted ones.
OTHER_LABELS = {
    "dob": ("Born", "Date of birth", "D.o.B", "Birthdate"),
    "mrn": ("Hosp. no", "URN", "Chart #", "MRN"),
    "other_id": ("NHS no", "CHI", "Medicare no.", "Member ID", "NHI"),
    "appointment": ("Appt", "Booked for", "Clinic appointment", "Next review"),
    "printed": ("Printed", "Generated", "Faxed", "Run date"),
}
#: Consent as a sentence: (truth, wordings). Negations and refusals are False.
CONSENT_SENTENCES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "affirm": (True, (
        "She has given verbal consent for this letter to be shared with the study team.",
        "Written consent to pass these details to the research nurses is on file.",
        "He is agreeable to his records being seen by the trial coordinators.",
    )),
    "no_objection": (True, (
        "The patient has no objection to these notes being shared with the research team.",
        "She raised no objection when asked about sharing her records with the study.",
    )),
    "refuse": (False, (
        "He has declined to have his details passed to the research team.",
        "When asked, she refused permission for the study team to see these notes.",
        "The patient has opted out of sharing her records for research.",
    )),
    "negated": (False, (
        "Consent for data sharing has not been obtained.",
        "I do not have the patient's permission to share this letter with researchers.",
        "No consent was given for these records to go to the study team.",
        "She did not agree to her information being shared with the trial.",
    )),
}  # fmt: skip
#: Checkbox statements: (affirming, denying).
CONSENT_BOXES = (
    ("Patient agrees to share these details with the study team",
     "Patient does not agree to share these details"),
    ("I consent to my records being released to the research team",
     "I do not consent to my records being released"),
    ("Permission to release to researchers granted", "Permission to release withheld"),
    ("Records may be shared with the research team",
     "Records may not be shared with the research team"),
)  # fmt: skip
#: A question answered by two boxes: (affirming option, denying option).
CONSENT_OPTIONS = (("Yes", "No"), ("Agreed", "Refused"), ("Obtained", "Not obtained"))
FIRST = ("Rose", "Grace", "Will", "Amber", "Hope", "Jack", "Sandy", "Aoife", "Kwame", "Mei-Ling",
         "Tane", "Oluwaseun", "Henrike", "Rhys", "Dolores", "Jean-Luc")  # fmt: skip
LAST = ("Mills", "Baker", "Bishop", "Lane", "Church", "Cotton", "Marsh", "O'Hare", "N'Diaye",
        "D'Arcy", "von Aschenbach", "da Silva", "bin Yusof", "Le Goff", "Lloyd-Ndlovu",
        "Ap Rhys", "Mac Giolla Bhríde", "Van Dyke", "Smith-Kowalczyk", "Ní Dhonnchadha",
        "Te Whare", "Fox")  # fmt: skip
TITLES = ("Dr", "Dr.", "Prof.", "Mx", "Dr med.")
CLINICS = (
    "Glenfield Community Hub", "Harbourside Family Practice", "Birchwood Medical Partnership",
    "Coldharbour Sleep Service", "St Brigid's Rheumatology", "Maple Ridge Family Clinic",
    "Kowhai Health Centre", "Wellington Street Medical Centre", "Tidewater Internal Medicine",
    "North Quay Lipid Clinic",
)  # fmt: skip
REASONS = (
    "Suspected obstructive sleep apnoea", "Intention tremor, ?essential tremor",
    "Iron deficiency anaemia without obvious source", "Screening visit for the migraine study",
    "Knee pain despite six weeks of physiotherapy", "Palpitations with presyncope",
    "Abnormal LFTs on routine bloods", "Follow-up of a 14 mm thyroid nodule",
    "Eligibility for the lipid-lowering registry", "Night sweats and fatigue since spring",
)  # fmt: skip
STREETS = ("Cobbler's Row", "Fenwick Terrace", "Harrow Drive", "Kauri Street", "Pine Ave")
TOWNS = (
    ("Stroud", "GL5 2HT"), ("Dungarvan", "X35 YT22"), ("Nelson", "7010"),
    ("Halifax NS", "B3H 1Y6"), ("Portland, OR", "97205"), ("Ballarat VIC", "3350"),
)  # fmt: skip
DRUGS = (("Ramipril", "5 mg"), ("Atorvastatin", "40 mg"), ("Levothyroxine", "75 mcg"),
         ("Metformin MR", "1 g"), ("Sertraline", "50 mg"), ("Apixaban", "5 mg"),
         ("Omeprazole", "20 mg"), ("Ferrous fumarate", "210 mg"))  # fmt: skip
FREQUENCIES = ("once daily", "BD", "nocte", "mane", "TDS", "as required")

#: Participant identifiers: site prefixes, separators, check letters, a hash.
ID_SHAPES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"PRT-{r.randint(2024, 2026)}-{r.randint(0, 99999):05d}",
    lambda r: f"S/{r.randint(1, 999):04d}/{r.choice(('KM', 'TW', 'QR'))}",
    lambda r: f"NZ-RX-{r.randint(1000, 9999)}-{r.choice('ABCDEF')}",
    lambda r: f"UKB#{r.randint(100000, 999999)}",
    lambda r: f"{r.randint(10, 48)}-{r.randint(0, 9999):04d}-{r.randint(1, 9):03d}",
    lambda r: f"A4C.{r.randint(100, 999)}.{r.choice('XYZ')}{r.randint(10, 99)}",
)


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


#: Day-first and written-out styles (any family); the month-first ones only where the
#: page says so (the US family prints "(MM/DD/YYYY)" in the label).
DATES: dict[str, Callable[[date], str]] = {
    "ordinal": lambda d: f"{_ordinal(d.day)} {d:%B %Y}",
    "weekday": lambda d: f"{d:%a} {d.day} {d:%b %Y}",
    "dots": lambda d: f"{d:%d.%m.%Y}",
    "short_year": lambda d: f"{d.day}/{d.month}/{d:%y}",
    "ymd_slash": lambda d: f"{d:%Y/%m/%d}",
    "dd_mon_yy": lambda d: f"{d:%d-%b-%y}",
}
US_DATES: dict[str, Callable[[date], str]] = {
    "us_long": lambda d: f"{d:%B} {d.day}, {d.year}",
    "us_numeric": lambda d: f"{d:%m/%d/%Y}",
}


@dataclass
class Consent:
    """How consent shows on the page: ``mode`` (a sentence kind, "boxes", "pair",
    "options" or "absent"), its truth (None: no evidence), and what is printed."""

    mode: str
    truth: bool | None
    sentence: str = ""
    statements: tuple[str, str] = ("", "")
    options: tuple[str, str] = ("", "")
    mark: str = "x"


#: One referral's values: truth, what is printed, labels, redaction identifiers, consent.
Drawn = DrawnValues[Consent]


def person(rng: random.Random, titled: bool) -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    given = rng.choice((first, first, f"{first[0]}.", f"{first[0]}.{rng.choice('ACEJMT')}."))
    return f"{rng.choice(TITLES)} {given} {last}" if titled else f"{first} {last}"


def draw_consent(rng: random.Random, boxes: bool) -> Consent:
    """Given or refused about equally often, absent about one time in ten."""
    roll = rng.random()
    if roll < 0.1:
        return Consent("absent", None)
    if boxes and roll < 0.75:
        given = rng.random() < 0.5
        mode = rng.choice(("boxes", "pair", "options"))
        statements, options = rng.choice(CONSENT_BOXES), rng.choice(CONSENT_OPTIONS)
        return Consent(mode, given, "", statements, options, rng.choice(("x", "tick", "fill")))
    kind = rng.choice(sorted(CONSENT_SENTENCES))
    truth, wordings = CONSENT_SENTENCES[kind]
    return Consent(kind, truth, rng.choice(wordings))


def _day(rng: random.Random, start: date, span: int) -> date:
    return start + timedelta(days=rng.randint(0, span))


def _other_person(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = person(rng, False)
        if name.split()[-1] not in taken:
            taken.add(name.split()[-1])
            return name


def draw_values(rng: random.Random, us: bool = False, boxes: bool = False) -> Drawn:
    """A referral's values with their distractors (other ids, dates and people)."""
    styles = US_DATES if us else DATES
    style = rng.choice(sorted(styles))
    show = styles[style]
    referred, born = _day(rng, date(2025, 2, 3), 600), _day(rng, date(1933, 1, 1), 29000)
    patient = person(rng, False)
    taken = {patient.split()[-1]}
    clinician = person(rng, True)
    while clinician.split()[-1] in taken:  # a referrer who shares the patient's surname
        clinician = person(rng, True)  # would make the truth ambiguous for redaction
    taken.add(clinician.split()[-1])
    others = [_other_person(rng, taken) for _ in range(3)]
    town, code = rng.choice(TOWNS)
    shown = {
        "participant_id": rng.choice(ID_SHAPES)(rng),
        "referral_date": show(referred),
        "referring_clinic": rng.choice(CLINICS),
        "clinician": clinician,
        "reason": rng.choice(REASONS),
        "patient_name": patient,
        "date_of_birth": show(born),
        "mrn": f"{rng.choice(('H', 'RX', 'M'))}{rng.randint(100000, 9999999)}",
        "phone": _phone(rng, us),
        "address": f"{rng.randint(1, 240)} {rng.choice(STREETS)}, {town} {code}",
        "other_id": f"{rng.randint(400, 799)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        "appointment": show(referred + timedelta(days=rng.randint(9, 80))),
        "printed": show(referred + timedelta(days=rng.randint(0, 3))),
        "clinic_phone": _phone(rng, us),
    }
    labels = {name: rng.choice(pool) for name, pool in {**LABELS, **OTHER_LABELS}.items()}
    consent = draw_consent(rng, boxes)
    # Consent None when the page says nothing either way: the bench then counts any value.
    truth = referral_truth(shown, referred, consent.truth)
    shown |= {f"other_person_{n}": name for n, name in enumerate(others, 1)}
    meta = {"date_style": style, "consent_as": consent.mode}
    return Drawn(truth, shown, labels, page_identifiers(shown), consent, meta)


def _phone(rng: random.Random, us: bool) -> str:
    if us:
        return f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}"
    return rng.choice((
        f"0{rng.randint(1200, 1999)} {rng.randint(100, 999)} {rng.randint(100, 999)}",
        f"+64 {rng.randint(3, 9)} {rng.randint(300, 999)} {rng.randint(1000, 9999)}",
        f"(0{rng.randint(2, 8)}) {rng.randint(3000, 9999)} {rng.randint(1000, 9999)}",
    ))  # fmt: skip
