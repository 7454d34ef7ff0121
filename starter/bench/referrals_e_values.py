"""What the fifth referral generator prints: wordings, people, sites, identifiers, dates.

Written blind (nothing under ``activities/`` read, nor the fields guide) and
chosen to differ from the other four generators' pools (the tests check that
no label wording, clinic or reason is shared). Wordings are those of
hospital secretaries, community nurses, trial coordinators, GPs and
specialists in Scotland, Wales, South Africa, India, Singapore, Canada and
the Netherlands writing in English. The truth keeps the referral date as
ISO, consent as a boolean or ``None`` where the page carries no evidence
(a careful reader records unknown), and every other field as printed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from starter.bench.referral_files import DrawnValues, page_identifiers, referral_truth

LABELS: dict[str, tuple[str, ...]] = {
    "participant_id": (
        "Cohort member code", "Study subject ref.", "Volunteer no", "Enrolment ID",
        "Screening number", "Protocol subject #", "Trial participant code",
    ),
    "referral_date": (
        "Letter dated", "Referral raised", "Sent on", "Date of referral letter",
        "Referred (date/time)",
    ),
    "referring_clinic": (
        "Referring department", "Referred in by (clinic)", "Sender's clinic",
        "Clinic of origin", "Home practice",
    ),
    "clinician": (
        "Referring practitioner", "Referrer name", "Doctor referring", "Author", "Sender",
    ),
    "reason": (
        "Question for the clinic", "Why referred", "Indication for referral",
        "What we are asking",
        "Details of problem",
    ),
    "consent": (
        "Agreement to share", "Data release agreed", "Study team may view records",
        "Patient's agreement",
    ),
}  # fmt: skip
#: Distractor labels: identifiers and dates that are not the wanted ones.
OTHER_LABELS = {
    "dob": ("DOB", "Date born", "Birth date"),
    "mrn": ("Hospital no.", "Case no", "Unit number", "K number"),
    "other_id": ("NHS No.", "CHI No", "Medical aid no", "Health card no", "BSN"),
    "appointment": ("Follow-up on", "Next visit", "Booked clinic", "Review due"),
    "printed": ("Printed on", "Faxed at", "Scanned", "Date filed"),
}
#: Consent written as a sentence: (truth, wordings).
CONSENT_SENTENCES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "affirm": (True, (
        "I have discussed the study with her and she is happy for the research team to see "
        "this letter.",
        "He signed the research sharing form in clinic today, agreeing to his notes going to "
        "the study team.",
        "She confirmed that the trial staff may have access to her hospital records.",
    )),
    "refuse": (False, (
        "He was clear that he does not want his records passed to any research team.",
        "She said no to sharing her notes with the study when I asked her.",
        "Please note the patient withdrew her agreement to data sharing last month.",
    )),
    "negated": (False, (
        "The patient has not agreed to release of these notes to researchers.",
        "There is no signed agreement for the study team to view her records.",
        "Records must not be shown to the research staff: agreement was never given.",
    )),
}  # fmt: skip
#: A question answered by marking one of two words (circled or ticked).
CONSENT_QUESTIONS = (
    "Does the patient agree to the study team seeing these records?",
    "Agreement to share records with research staff obtained?",
    "May the trial team access this referral?",
)
CONSENT_ANSWERS = (("YES", "NO"), ("Agreed", "Declined"), ("Y", "N"))
#: One box, crossed, beside a statement that affirms or denies: (affirming, denying).
CONSENT_STATEMENTS = (
    ("The patient is willing for researchers to read this referral",
     "The patient is not willing for researchers to read this referral"),
    ("Study staff may have sight of these notes", "Study staff may NOT have sight of these notes"),
    ("Agreement to data release recorded", "Patient declines data release"),
)  # fmt: skip
FIRST = ("Summer", "Hazel", "Rich", "Iman", "Bea", "Pieter", "Ngaire", "Siew Ling", "Thabo",
         "Ifeoma", "Joy", "Marguerite", "Ravi", "Cerys", "Ewan", "Anneke", "Mark")  # fmt: skip
LAST = ("Field", "Brook", "Cook", "Al-Sayed", "ten Brink", "van der Berg", "O'Connell-Ruiz",
        "De la Cruz", "Naidoo", "Mokoena", "Ó Floinn", "Wood", "Taylor", "Bell", "Hart",
        "McAllister", "St. John", "Ng", "de Vries-Bakker", "Pillay", "Fairweather")  # fmt: skip
TITLES = ("Dr", "Dr.", "Prof", "Sr", "Mr", "Ms")
CLINICS = (
    "Kelvinside Medical Group", "Ystrad Valley Surgery", "Rondebosch Family Practice",
    "Tanjong Pagar Polyclinic", "Bandra West Diabetes Centre", "Lakeshore Memory Clinic",
    "Zuidas Huisartsenpraktijk", "Caerleon Road Health Centre", "Riverside Hepatology Unit",
    "Aberdour Community Nursing Team",
)  # fmt: skip
REASONS = (
    "Progressive breathlessness on exertion over four months with new ankle swelling; "
    "an echocardiogram has been requested but not yet done",
    "Recurrent falls at home, two in the last fortnight, with a possible loss of consciousness "
    "on the second occasion",
    "Raised HbA1c of 71 despite maximum oral therapy, for consideration of the insulin pump study",
    "Persistent hoarseness for nine weeks in a former smoker",
    "Memory concerns raised by her daughter, MoCA 22 of 30, for assessment and the cohort study",
    "Rectal bleeding with change in bowel habit; FIT positive",
    "Chronic cough with weight loss of 6 kg since January and a normal chest X-ray",
    "Ferritin above 1000 on two occasions, ?haemochromatosis",
    "Worsening psoriatic arthritis in both hands, for review of biologic eligibility",
    "Leg ulcer not healing after twelve weeks of compression",
)  # fmt: skip
STREETS = ("Byres Road", "Heol y Llan", "Main Road", "Orchard Lane", "Keizersgracht")
TOWNS = (("Glasgow", "G12 8QQ"), ("Caerphilly", "CF83 1AB"), ("Cape Town", "7700"),
         ("Singapore", "088540"), ("Mumbai", "400050"), ("Toronto ON", "M4E 1A1"))  # fmt: skip
DRUGS = (("Bisoprolol", "2.5 mg"), ("Gliclazide", "80 mg"), ("Amlodipine", "10 mg"),
         ("Furosemide", "40 mg"), ("Donepezil", "5 mg"), ("Methotrexate", "15 mg weekly"),
         ("Co-codamol", "30/500"), ("Lansoprazole", "30 mg"))  # fmt: skip
ROUTES = ("oral", "PO", "s/c", "top.")
#: Participant identifiers: registry prefixes, slashes, dots, underscores, a check letter.
ID_SHAPES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"CRN/{r.randint(23, 26)}/{r.randint(0, 999999):06d}",
    lambda r: f"ELM{r.randint(1000, 9999)}{r.choice('KPRW')}",
    lambda r: f"R{r.randint(1, 9)}-{r.randint(100, 999)}-{r.randint(0, 999):03d}",
    lambda r: f"{r.randint(0, 99999):05d}/E/{r.randint(23, 26)}",
    lambda r: f"LUMA_{r.randint(1000, 9999)}",
    lambda r: f"ct.{r.randint(1000, 9999)}.p{r.randint(1, 9)}",
)
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


def _clock(d: date, at: time) -> datetime:
    return datetime.combine(d, at)


#: Written date styles, some with times of day; (date, time) -> text.
DATES: dict[str, Callable[[date, time], str]] = {
    "dmy_time": lambda d, t: f"{d:%d/%m/%Y} {t:%H:%M}",
    "iso_t": lambda d, t: f"{_clock(d, t):%Y-%m-%dT%H:%M}",
    "long_am": lambda d, t: (
        f"{d:%A} {d.day} {d:%B %Y}, {t.hour % 12 or 12}.{t:%M}{'am' if t.hour < 12 else 'pm'}"
    ),
    "at_time": lambda d, t: f"{d.day} {d:%b %Y} @ {t:%H%M}h",
    "roman": lambda d, _: f"{d.day}.{_ROMAN[d.month - 1]}.{d.year}",
    "dash_mon": lambda d, _: f"{d.day:02d}-{d:%b}-{d.year}".upper(),
    "month_day": lambda d, _: f"{d:%B} {d.day} {d.year}",
}


@dataclass
class Consent:
    """How consent shows: ``mode`` ("affirm", "refuse", "negated" sentences, "circled"
    or "ticked" answers, a crossed "statement" box, "absent"), its truth (None: no
    evidence), and what is printed (a statement stands in ``question``)."""

    mode: str
    truth: bool | None
    sentence: str = ""
    question: str = ""
    answers: tuple[str, str] = ("", "")


@dataclass
class Drawn(DrawnValues[Consent]):
    """One referral's values: truth, what is printed, labels, redaction identifiers, consent."""

    #: The referral date's parts, for a comb of boxes (DD MM YYYY).
    comb_date: str = ""


def draw_consent(rng: random.Random, marks: bool) -> Consent:
    """Given or refused about equally often, absent about one time in eight."""
    roll = rng.random()
    if roll < 0.125:
        return Consent("absent", None)
    if marks and roll < 0.7:
        given, mode = rng.random() < 0.5, rng.choice(("circled", "ticked", "statement"))
        if mode == "statement":
            return Consent(mode, given, "", rng.choice(CONSENT_STATEMENTS)[0 if given else 1])
        return Consent(mode, given, "", rng.choice(CONSENT_QUESTIONS), rng.choice(CONSENT_ANSWERS))
    kind = rng.choice(("affirm", "affirm", "refuse", "negated"))
    truth, wordings = CONSENT_SENTENCES[kind]
    return Consent(kind, truth, rng.choice(wordings))


def person(rng: random.Random, titled: bool, taken: set[str]) -> str:
    """A name whose surname no one else on the page has."""
    while True:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        if last not in taken:
            break
    taken.add(last)
    given = rng.choice((first, first, f"{first[0]}.", f"{first[0]}. {rng.choice('BDKLS')}."))
    return f"{rng.choice(TITLES)} {given} {last}" if titled else f"{first} {last}"


def draw_values(rng: random.Random, marks: bool) -> Drawn:
    """A referral's values with their distractors (other ids, dates and people)."""
    style = rng.choice(sorted(DATES))
    show = DATES[style]
    referred = date(2025, 1, 6) + timedelta(days=rng.randint(0, 640))
    born = date(1931, 1, 1) + timedelta(days=rng.randint(0, 29500))
    at = time(rng.randint(7, 18), rng.randint(0, 59))
    taken: set[str] = set()
    patient = person(rng, False, taken)
    clinician = person(rng, True, taken)
    others = [person(rng, rng.random() < 0.5, taken) for _ in range(3)]
    town, code = rng.choice(TOWNS)
    shown = {
        "participant_id": rng.choice(ID_SHAPES)(rng),
        "referral_date": show(referred, at),
        "referring_clinic": rng.choice(CLINICS),
        "clinician": clinician,
        "reason": rng.choice(REASONS),
        "patient_name": patient,
        # Particles and two-word given names: the surname as drawn, for "SURNAME, Given".
        "patient_surname": max((n for n in LAST if patient.endswith(f" {n}")), key=len),
        "date_of_birth": f"{born:%d/%m/%Y}",
        "mrn": f"{rng.choice(('K', 'GH', 'U'))}{rng.randint(1000000, 9999999)}",
        "phone": f"0{rng.randint(7100, 7999)} {rng.randint(100000, 999999)}",
        "address": f"{rng.randint(2, 180)} {rng.choice(STREETS)}, {town} {code}",
        "other_id": f"{rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "appointment": show(referred + timedelta(days=rng.randint(7, 60)), time(10, 30)),
        "printed": show(referred + timedelta(days=rng.randint(1, 4)), time(16, 5)),
        "clinic_phone": f"+44 {rng.randint(1200, 1999)} {rng.randint(100000, 999999)}",
        "clinic_address": f"{rng.randint(1, 99)} {rng.choice(STREETS)}, {town}",
        "recipient": rng.choice(("Research Office", "Trials Unit", "Study Coordinator")),
        "recipient_address": f"{rng.choice(('Level 3', 'Block C', 'Floor 2'))}, "
        f"{rng.choice(('Gartnavel Research Hub', 'Tygerberg Trials Centre', 'Kent Ridge CRF'))}",
        "recipient_phone": f"+{rng.randint(27, 65)} {rng.randint(10, 99)} {rng.randint(1000, 9999)}"
        f" {rng.randint(1000, 9999)}",
    }
    shown |= {f"other_person_{n}": name for n, name in enumerate(others, 1)}
    labels = {name: rng.choice(pool) for name, pool in {**LABELS, **OTHER_LABELS}.items()}
    consent = draw_consent(rng, marks)
    truth = referral_truth(shown, referred, consent.truth)  # None: nothing either way
    meta = {"date_style": style, "consent_as": consent.mode}
    identifiers = page_identifiers(shown)
    return Drawn(truth, shown, labels, identifiers, consent, meta, f"{referred:%d%m%Y}")
