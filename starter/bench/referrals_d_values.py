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
from dataclasses import dataclass
from datetime import date, timedelta

from starter.bench.pools import Shape, date_styles, pools
from starter.bench.referral_files import DrawnValues, page_identifiers, referral_truth

#: Label wordings per field and for the distractors (identifiers and dates that are not
#: the wanted ones); consent as a sentence (truth, wordings: negations and refusals are
#: False), as checkbox statements and as options (affirming, denying); people, clinics,
#: reasons, streets, towns, drugs (name, dose), frequencies and date styles
#: (``data/referrals_d.json``).
POOLS = pools("referrals_d")

#: Participant identifiers: site prefixes, separators, check letters, a hash.
ID_SHAPES = tuple(map(Shape, POOLS.id_shapes))


#: Day-first and written-out styles (any family); the month-first ones only where the
#: page says so (the US family prints "(MM/DD/YYYY)" in the label).
DATES = date_styles(POOLS.dates)
US_DATES = date_styles(POOLS.us_dates)


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
    first, last = rng.choice(POOLS.first), rng.choice(POOLS.last)
    given = rng.choice((first, first, f"{first[0]}.", f"{first[0]}.{rng.choice('ACEJMT')}."))
    return f"{rng.choice(POOLS.titles)} {given} {last}" if titled else f"{first} {last}"


def draw_consent(rng: random.Random, boxes: bool) -> Consent:
    """Given or refused about equally often, absent about one time in ten."""
    roll = rng.random()
    if roll < 0.1:
        return Consent("absent", None)
    if boxes and roll < 0.75:
        given = rng.random() < 0.5
        mode = rng.choice(("boxes", "pair", "options"))
        statements, options = rng.choice(POOLS.consent_boxes), rng.choice(POOLS.consent_options)
        return Consent(mode, given, "", statements, options, rng.choice(("x", "tick", "fill")))
    kind = rng.choice(sorted(POOLS.consent_sentences))
    truth, wordings = POOLS.consent_sentences[kind]
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
    town, code = rng.choice(POOLS.towns)
    shown = {
        "participant_id": rng.choice(ID_SHAPES)(rng),
        "referral_date": show(referred),
        "referring_clinic": rng.choice(POOLS.clinics),
        "clinician": clinician,
        "reason": rng.choice(POOLS.reasons),
        "patient_name": patient,
        "date_of_birth": show(born),
        "mrn": f"{rng.choice(('H', 'RX', 'M'))}{rng.randint(100000, 9999999)}",
        "phone": _phone(rng, us),
        "address": f"{rng.randint(1, 240)} {rng.choice(POOLS.streets)}, {town} {code}",
        "other_id": f"{rng.randint(400, 799)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        "appointment": show(referred + timedelta(days=rng.randint(9, 80))),
        "printed": show(referred + timedelta(days=rng.randint(0, 3))),
        "clinic_phone": _phone(rng, us),
    }
    wordings = {**POOLS.labels, **POOLS.other_labels}
    labels = {name: rng.choice(pool) for name, pool in wordings.items()}
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
