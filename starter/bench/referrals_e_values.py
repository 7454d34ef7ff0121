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
from dataclasses import dataclass
from datetime import date, time, timedelta

from starter.bench.pools import Shape, date_styles, pools
from starter.bench.referral_files import DrawnValues, page_identifiers, referral_truth

#: Label wordings per field and for the distractors (identifiers and dates that are not
#: the wanted ones); consent as a sentence (truth, wordings), as a question answered by
#: marking one of two words (circled or ticked), and as one box crossed beside a statement
#: (affirming, denying); people, clinics, reasons, streets, towns, drugs (name, dose),
#: routes and date styles, some with times of day (``data/referrals_e.json``).
POOLS = pools("referrals_e")
#: Participant identifiers: registry prefixes, slashes, dots, underscores, a check letter.
ID_SHAPES = tuple(map(Shape, POOLS.id_shapes))
#: Written date styles, some with times of day: (date, time) -> text.
DATES = date_styles(POOLS.dates)


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
            return Consent(mode, given, "", rng.choice(POOLS.consent_statements)[0 if given else 1])
        question, answers = rng.choice(POOLS.consent_questions), rng.choice(POOLS.consent_answers)
        return Consent(mode, given, "", question, answers)
    kind = rng.choice(("affirm", "affirm", "refuse", "negated"))
    truth, wordings = POOLS.consent_sentences[kind]
    return Consent(kind, truth, rng.choice(wordings))


def person(rng: random.Random, titled: bool, taken: set[str]) -> str:
    """A name whose surname no one else on the page has."""
    while True:
        first, last = rng.choice(POOLS.first), rng.choice(POOLS.last)
        if last not in taken:
            break
    taken.add(last)
    given = rng.choice((first, first, f"{first[0]}.", f"{first[0]}. {rng.choice('BDKLS')}."))
    return f"{rng.choice(POOLS.titles)} {given} {last}" if titled else f"{first} {last}"


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
    town, code = rng.choice(POOLS.towns)
    shown = {
        "participant_id": rng.choice(ID_SHAPES)(rng),
        "referral_date": show(referred, at),
        "referring_clinic": rng.choice(POOLS.clinics),
        "clinician": clinician,
        "reason": rng.choice(POOLS.reasons),
        "patient_name": patient,
        # Particles and two-word given names: the surname as drawn, for "SURNAME, Given".
        "patient_surname": max((n for n in POOLS.last if patient.endswith(f" {n}")), key=len),
        "date_of_birth": f"{born:%d/%m/%Y}",
        "mrn": f"{rng.choice(('K', 'GH', 'U'))}{rng.randint(1000000, 9999999)}",
        "phone": f"0{rng.randint(7100, 7999)} {rng.randint(100000, 999999)}",
        "address": f"{rng.randint(2, 180)} {rng.choice(POOLS.streets)}, {town} {code}",
        "other_id": f"{rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "appointment": show(referred + timedelta(days=rng.randint(7, 60)), time(10, 30)),
        "printed": show(referred + timedelta(days=rng.randint(1, 4)), time(16, 5)),
        "clinic_phone": f"+44 {rng.randint(1200, 1999)} {rng.randint(100000, 999999)}",
        "clinic_address": f"{rng.randint(1, 99)} {rng.choice(POOLS.streets)}, {town}",
        "recipient": rng.choice(("Research Office", "Trials Unit", "Study Coordinator")),
        "recipient_address": f"{rng.choice(('Level 3', 'Block C', 'Floor 2'))}, "
        f"{rng.choice(('Gartnavel Research Hub', 'Tygerberg Trials Centre', 'Kent Ridge CRF'))}",
        "recipient_phone": f"+{rng.randint(27, 65)} {rng.randint(10, 99)} {rng.randint(1000, 9999)}"
        f" {rng.randint(1000, 9999)}",
    }
    shown |= {f"other_person_{n}": name for n, name in enumerate(others, 1)}
    wordings = {**POOLS.labels, **POOLS.other_labels}
    labels = {name: rng.choice(pool) for name, pool in wordings.items()}
    consent = draw_consent(rng, marks)
    truth = referral_truth(shown, referred, consent.truth)  # None: nothing either way
    meta = {"date_style": style, "consent_as": consent.mode}
    identifiers = page_identifiers(shown)
    return Drawn(truth, shown, labels, identifiers, consent, meta, f"{referred:%d%m%Y}")
