"""The seventh generator's values: its wordings, sites, people, numbers and dates.

Written blind (see ``starter.bench.referrals_g``): every pool here is its own.
Study numbers carry a check letter (the digits' sum modulo 23, as a letter);
numeric dates are drawn with a day past the 12th, so no order is ambiguous.
Consent is a ticked statement or a ringed answer (marked pages only), a sentence
that agrees or refuses, or absent (then ``None``: sometimes the question is
printed and left unanswered, which says nothing either way).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from starter.bench.referral_files import DrawnValues, page_identifiers, referral_truth

__all__ = [
    "CLINICS",
    "CONSENT_QUESTIONS",
    "CONSENT_SENTENCES",
    "CONSENT_STATEMENTS",
    "DATES",
    "FAMILY_DATES",
    "LABELS",
    "REASONS",
    "Consent",
    "draw_consent",
    "draw_values",
]

#: Each field's label wordings (questions for the numbered form under ``q_``).
LABELS: dict[str, tuple[str, ...]] = {
    "referral_date": ("Referral raised on", "Date referral made", "Referred (date)",
                      "Day of referral", "Referral lodged"),
    "participant_id": ("Research subject no.", "Participant ref", "Trial subject code",
                       "Cohort member ID", "Allocated study code"),
    "referring_clinic": ("Source clinic", "Sent from clinic", "Originating service",
                         "Clinic sending referral", "Referring dept / clinic"),
    "clinician": ("Referrer (name & grade)", "Referred by clinician", "Responsible referrer",
                  "Requesting practitioner", "Signed off by"),
    "reason": ("Concern to address", "Reason in brief", "Clinical issue raised",
               "Grounds for referral", "Referral made because"),
    "patient_name": ("Name of patient", "Patient's full name", "Client name", "Person referred"),
    "date_of_birth": ("Pt born", "Born on", "Birth date (pt)", "Date of birth (patient)"),
    "mrn": ("Hosp. reg. no.", "Unit number", "Case-note no.", "Local patient no."),
    "phone": ("Contact tel.", "Patient mobile", "Telephone (home)"),
    "address": ("Home address", "Residence", "Lives at"),
    "appointment": ("Next clinic appt", "Booked for", "Appointment offered"),
    "letter_date": ("Typed", "Date keyed", "Form completed"),
    "gp": ("Registered GP", "Family doctor", "Usual GP"),
    "after_referral_date": ("day referred", "referral posted", "referred on this date"),
    "after_clinician": ("sending clinician", "clinician referring", "who referred"),
    "after_participant_id": ("allocated no.", "subject code"),
    "q_referral_date": ("On what date was the referral made?", "Date the referral was raised"),
    "q_participant_id": ("Participant number allocated by the study",
                         "Study code given to the participant"),
    "q_referring_clinic": ("Which clinic is making this referral?", "Name of referring clinic"),
    "q_clinician": ("Who is the referring clinician?", "Name of the clinician referring"),
    "q_reason": ("What is the reason for referral?", "In brief, why is the patient referred?"),
}  # fmt: skip
#: The other number a page prints: its label and shape, by kind.
OTHER_IDS: dict[str, tuple[str, ...]] = {
    "nhs": ("NHS No.", "NHS number"),
    "lab": ("Lab accession", "Pathology lab no."),
    "insurer": ("Insurer ref", "Policy no."),
}
CLINICS = (
    "Harrowgate Lane Memory Service", "Pinecroft Respiratory Outreach",
    "Kestle Mill Falls Clinic", "Ambleside Road Musculoskeletal Hub",
    "Vardon Street Heart Failure Service", "Corran Bay Renal Day Unit",
    "Tolworth Fen Sleep Laboratory", "Blackwater Quay Rheumatology",
    "Ellerby Moor Community Neuro Team", "Quenby Park Lipid Clinic",
    "Sutterfield Hepatology Outpatients", "Marlow Chase Pain Service",
    "Oakhanger Vale Stroke Follow-up", "Fennick Row Dermatology",
)  # fmt: skip
REASONS = (
    "recurrent vasovagal syncope", "suspected early parkinsonism",
    "poorly controlled type 2 diabetes on insulin", "intermittent visible haematuria",
    "resistant hypertension despite three agents", "worsening exertional breathlessness",
    "chronic widespread pain with fatigue", "weight loss of 8 kg since spring",
    "new onset atrial fibrillation", "stage 3b chronic kidney disease",
    "mild cognitive impairment for assessment", "raised ALT on repeat testing",
    "refractory plantar fasciitis", "psoriatic nail changes",
    "frequent nocturnal leg cramps", "post-stroke spasticity review",
    "familial hypercholesterolaemia screening",
)  # fmt: skip
#: Ticked statements: (affirms, denies); one or both printed, one ticked.
CONSENT_STATEMENTS = (
    ("I agree that the study team may contact me", "I do not wish to be contacted about research"),
    ("Patient consents to details being passed to the study office",
     "Patient has NOT consented to details being passed on"),
    ("Happy to hear from the research nurses", "Would rather not hear from the research nurses"),
)  # fmt: skip
#: Ringed answers: a question, then its (yes, no) options.
CONSENT_QUESTIONS = (
    ("Research contact agreed?", ("Yes", "No")),
    ("May the study office contact this patient?", ("Y", "N")),
    ("Permission to share details with the study", ("Agreed", "Declined")),
)
#: Sentences, by kind: (truth, wordings); ``{who}`` is the patient as the page names them.
CONSENT_SENTENCES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "agrees": (True, (
        "{who} is happy for the study team to get in touch.",
        "{who} has agreed to her or his details being shared with the trial office.",
        "Verbal consent to research contact was obtained from {who}.",
        "{who} raised no objection to being contacted by the research team, and agreed.",
    )),
    "refuses": (False, (
        "{who} has declined to be contacted by the study team.",
        "{who} does not want any details passed to the research nurses.",
        "Consent to research contact was refused by {who}.",
        "{who} asked that the study office should not make contact.",
    )),
}  # fmt: skip


def _n(day: date) -> str:
    return f"{day:%B}"


#: Each date style: how a date is written.
DATES: dict[str, Callable[[date], str]] = {
    "dotted": lambda d: f"{d:%d.%m.%Y}",
    "iso": lambda d: d.isoformat(),
    "dmy_slash": lambda d: f"{d:%d/%m/%Y}",
    "mdy_slash": lambda d: f"{d:%m/%d/%Y}",
    "ymd_slash": lambda d: f"{d:%Y/%m/%d}",
    "abbr": lambda d: f"{d.day} {d:%b %Y}",
    "caps_abbr": lambda d: f"{d:%d-%b-%Y}".upper(),
    "mdy_abbr": lambda d: f"{d:%b} {d.day}, {d.year}",
    "two_digit": lambda d: f"{d.day}-{d:%b-%y}",
    "ordinal": lambda d: f"{_ordinal(d.day)} {_n(d)} {d.year}",
    "long_words": lambda d: f"{_WORDS[d.day - 1]} of {_n(d)} {d.year}",
}
#: The date styles each family writes in.
FAMILY_DATES = {
    "leader_form": ("abbr", "ordinal", "dotted"),
    "header_row_table": ("iso", "ymd_slash", "dmy_slash"),
    "numbered_questionnaire": ("long_words", "ordinal", "mdy_abbr"),
    "ehr_screen": ("caps_abbr", "iso", "mdy_slash"),
    "clinic_note": ("dmy_slash", "two_digit", "dotted"),
}
_NUMERIC = frozenset({"dotted", "dmy_slash", "mdy_slash", "ymd_slash", "iso"})
_WORDS: tuple[str, ...] = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second",
    "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh",
    "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first",
)  # fmt: skip


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class Consent:
    """How a page shows consent: its ``mode`` ("ticked", "ringed", "agrees", "refuses",
    "absent"), what it says (``sentence``: the statement ticked, the question ringed, or
    the sentence's wording), the statements printed, the answer ringed, and whether an
    absent consent is a question left unanswered (``blank``)."""

    truth: bool | None
    mode: str
    sentence: str = ""
    statements: tuple[str, ...] = ()
    options: tuple[str, str] = ("Yes", "No")
    blank: bool = False


#: One referral's values, as the families draw them.
Drawn = DrawnValues[Consent]


def draw_consent(rng: random.Random, marks: bool = True) -> Consent:
    """Consent shown one way: marked (only if ``marks``), said in a sentence, or absent."""
    roll = rng.random()
    if roll < 0.17:
        question, options = rng.choice(CONSENT_QUESTIONS)
        return Consent(
            None, "absent", question, options=options, blank=marks and rng.random() < 0.5
        )
    if marks and roll < 0.45:
        affirm, deny = rng.choice(CONSENT_STATEMENTS)
        truth = rng.random() < 0.5
        ticked = affirm if truth else deny
        printed = rng.choice(((affirm, deny), (ticked,)))
        return Consent(truth, "ticked", ticked, printed)
    if marks and roll < 0.7:
        question, options = rng.choice(CONSENT_QUESTIONS)
        return Consent(rng.random() < 0.5, "ringed", question, options=options)
    kind = rng.choice(list(CONSENT_SENTENCES))
    truth, wordings = CONSENT_SENTENCES[kind]
    return Consent(truth, kind, rng.choice(wordings))


_FIRST = (
    "Kwame", "Ines", "Tomasz", "Priya", "Eilidh", "Rohan", "Marguerite", "Dafydd", "Aoife",
    "Bogdan", "Yusra", "Lorcan", "Hester", "Anselm", "Wren", "Ottilie", "Cedric", "Fenella",
    "Ishaan", "Morwenna",
)  # fmt: skip
_SURNAMES = (
    "Osei", "Halloran", "Wrobel", "Raman-Holt", "Fairbairn", "Lindqvist", "Amadi", "Penhallow",
    "Moss", "Teague", "Quarrie", "Szabo", "Nwachukwu", "Gethin", "Ostrowska", "Carvalho",
    "Pryke", "Delacourt", "Haverty", "Iqbal", "Mbeki", "Tregenza", "Vukovic", "Ashdown",
)  # fmt: skip
#: Each title a clinician goes by, and the post-nominals printed after it.
_TITLES = {
    "Dr": ("", ", MRCP", ", MRCGP", " MRCPsych"),
    "Mr": ("", " FRCS", ", FRCS (Orth)"),
    "Ms": ("", " FRCS"),
    "Prof.": ("", ", FRCP"),
    "Sister": ("", " (ANP)"),
}
_STREETS = ("Tannery Row", "Gull Lane", "Priory Crescent", "Wexcombe Drive", "Coldharbour Way")
_TOWNS = (("Ludbury", "LD4 7QT"), ("Cressington", "CR9 2HX"), ("Amblecote", "AE3 8WF"))
#: Each study's name, and how its participant numbers are shaped (``{c}``: check letter).
_STUDIES = (
    ("QUIVER study", "QV/{yy}/{n4}-{c}"),
    ("HORIZON-B cohort", "HRZ.{n5}.{c}"),
    ("MERIDIAN trial", "MRD{n2}-{n3}{c}"),
    ("LUXOR registry", "LX{c}-{n3}/{n2}"),
)


def _study_number(rng: random.Random, shape: str) -> str:
    digits = {f"n{k}": "".join(rng.choice("0123456789") for _ in range(k)) for k in (2, 3, 4, 5)}
    digits["yy"] = str(rng.choice((24, 25, 26)))
    total = sum(int(ch) for ch in shape.format(c="", **digits) if ch.isdigit())
    return shape.format(c="ABCDEFGHJKLMNPQRSTUVWXY"[total % 23], **digits)


def _digits(rng: random.Random, shape: str) -> str:
    """``shape`` with each 9 a digit drawn and each @ a capital."""
    return "".join(
        rng.choice("0123456789") if ch == "9" else rng.choice("BCDFGHKMRTX") if ch == "@" else ch
        for ch in shape
    )


def draw_people(rng: random.Random, family: str) -> dict[str, str]:
    """The patient (surname first on a screen or a table), their numbers and address, the
    clinician (a title, initials or a first name, a post-nominal), a GP and a typist."""
    first, gp_first, typist_first = rng.sample(_FIRST, 3)
    surname, doctor, gp, typist = rng.sample(_SURNAMES, 4)
    upper = family in ("ehr_screen", "header_row_table")
    title = rng.choice(list(_TITLES))
    given = rng.choice((rng.choice(_FIRST), f"{rng.choice('ABDEHJKMRS')}.", ""))
    study, shape = rng.choice(_STUDIES)
    street, (town, postcode) = rng.choice(_STREETS), rng.choice(_TOWNS)
    return {
        "patient_name": f"{surname.upper()}, {first}" if upper else f"{first} {surname}",
        "who": rng.choice((f"{first} {surname}", first)),
        "clinician": f"{title} {given} {doctor}{rng.choice(_TITLES[title])}".replace("  ", " "),
        "clinician_surname": doctor,
        "patient_surname": surname,
        "other_person_1": f"Dr {gp_first} {gp}",
        "other_person_2": f"{typist_first} {typist}",
        "mrn": _digits(rng, rng.choice(("@9999999", "RX 999 9999", "H99-999-99"))),
        "id_nhs": _digits(rng, "999 999 9999"),
        "id_lab": _digits(rng, "LB-99-9999999"),
        "id_insurer": _digits(rng, "AXA 9999 9999 @"),
        "phone": _digits(rng, rng.choice(("01632 960 999", "07700 900 999"))),
        "clinic_phone": _digits(rng, "0113 496 9999"),
        "fax": _digits(rng, "0113 496 9999"),
        "address": f"{rng.randint(2, 140)} {street}, {town} {postcode}",
        "study": study,
        "participant_id": _study_number(rng, shape),
    }


def _day(rng: random.Random, start: date, span: int, numeric: bool) -> date:
    """A day within ``span`` of ``start``, past the 12th if ``numeric`` (the span widened a
    day at a time where none of it is)."""
    while True:
        day = start + timedelta(days=rng.randrange(span))
        if not numeric or day.day > 12:
            return day
        span += 1


def draw_dates(rng: random.Random, family: str) -> tuple[str, dict[str, date]]:
    """A family's date style, and the referral's dates: referred, typed (a few days
    after), an appointment after that, and the patient's birth."""
    style = rng.choice(FAMILY_DATES[family])
    numeric = style in _NUMERIC
    referred = _day(rng, date(2025, 1, 1), 600, numeric)
    typed = _day(rng, referred + timedelta(days=1), 8, numeric)
    days = {"referred": referred, "typed": typed,
            "appointment": _day(rng, referred + timedelta(days=14), 60, numeric),
            "born": _day(rng, date(1938, 1, 1), 365 * 66, numeric)}  # fmt: skip
    return style, days


def draw_values(rng: random.Random, family: str) -> Drawn:
    """One referral's values as ``family`` prints them, its consent marked where it may."""
    style, days = draw_dates(rng, family)
    shown = {k: DATES[style](days[d]) for k, d in _DATE_KEYS.items()}
    shown |= draw_people(rng, family)
    shown["referring_clinic"] = rng.choice(CLINICS)
    if family == "header_row_table" and rng.random() < 0.5:
        shown["referring_clinic"] = shown["referring_clinic"].upper()
    shown["reason"] = rng.choice(REASONS)
    kind = rng.choice(list(OTHER_IDS))
    labels = {name: rng.choice(pool) for name, pool in LABELS.items()}
    labels["other_id"] = rng.choice(OTHER_IDS[kind])
    consent = draw_consent(rng, marks=family != "clinic_note")
    truth = referral_truth(shown, days["referred"], consent.truth)
    meta = {"date_style": style, "consent_as": consent.mode, "other_id": kind,
            "consent_blank": str(consent.blank).lower(), "study": shown["study"]}  # fmt: skip
    shown["other_id"] = shown[f"id_{kind}"]
    return DrawnValues(truth, shown, labels, page_identifiers(shown), consent, meta)


_DATE_KEYS = {"referral_date": "referred", "letter_date": "typed",
              "appointment": "appointment", "date_of_birth": "born"}  # fmt: skip
