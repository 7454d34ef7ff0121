"""What the third referral generator prints: wordings, people, sites, identifiers and dates.

Every pool (``data/referrals_c.json``) was written without reading the field readers, the redaction
detectors or the document types' label variants, and chosen to differ from
the first two generators' pools (``tests/starter/bench/test_referrals_c.py``
checks that no label wording, clinic or reason is shared). Values are printed
the way the sites that would send them print them; the truth keeps the
referral date as ISO, consent as a boolean, and every other field exactly as
printed beside its label.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

from starter.bench.pools import Shape, date_styles, pools
from starter.bench.referral_files import Printed

#: Label wordings per field, consent options (affirming, denying) and sentences, people,
#: clinics, reasons, streets, towns and date styles (``data/referrals_c.json``).
POOLS = pools("referrals_c")
#: A consent sentence's wordings, by whether it affirms.
SENTENCES = {True: POOLS.consent_sentences["given"], False: POOLS.consent_sentences["refused"]}


def _id_letter(rng: random.Random) -> str:
    digits = f"{rng.randint(10000, 99999)}"
    check = "ABCDEFGHJKLMNPQRSTUVWXYZ"[sum(int(c) for c in digits) % 24]
    return f"ENR-{digits}-{check}"


#: Participant identifiers with each site's own prefix, separator and check character.
ID_SHAPES: tuple[Callable[[random.Random], str], ...] = (_id_letter, *map(Shape, POOLS.id_shapes))
#: Printed date styles; every style prints an ISO date back unambiguously (day first).
DATES = date_styles(POOLS.dates)


@dataclass
class Drawn(Printed):
    """One referral's values: the truth, what is printed, labels, and the redaction-only
    identifiers of the patient (as printed)."""

    truth: dict[str, str | bool]
    shown: dict[str, str]
    labels: dict[str, str]
    identifiers: dict[str, str]
    consent: bool
    options: tuple[str, str]
    meta: dict[str, str] = field(default_factory=dict)


def _person(rng: random.Random, titled: bool) -> str:
    first, last = rng.choice(POOLS.first), rng.choice(POOLS.last)
    given = rng.choice((first, f"{first[0]}.", f"{first[0]}. {rng.choice('ABDEJMR')}."))
    return f"{rng.choice(POOLS.titles)} {given} {last}" if titled else f"{first} {last}"


def _day(rng: random.Random, start: date, span: int) -> date:
    return start + timedelta(days=rng.randint(0, span))


def draw_values(rng: random.Random) -> Drawn:
    """A referral's values, distractors beside them (a GP, an NHS number, a fax, dates)."""
    style = rng.choice(sorted(DATES))
    referred, born = _day(rng, date(2025, 1, 6), 640), _day(rng, date(1931, 1, 1), 30000)
    patient, clinician = _person(rng, False), _person(rng, True)
    gp = _person(rng, True)
    while gp.split()[-1] == clinician.split()[-1]:
        gp = _person(rng, True)
    town, postcode = rng.choice(POOLS.towns)
    shown = {
        "participant_id": rng.choice(ID_SHAPES)(rng),
        "referral_date": DATES[style](referred),
        "referring_clinic": rng.choice(POOLS.clinics),
        "clinician": clinician,
        "reason": rng.choice(POOLS.reasons),
        "patient_name": patient,
        "date_of_birth": DATES[rng.choice(sorted(DATES))](born),
        "phone": f"0{rng.randint(1200, 1999)} {rng.randint(100000, 999999)}",
        "address": f"{rng.randint(2, 98)} {rng.choice(POOLS.streets)}, {town} {postcode}",
        "gp": gp,
        "nhs": f"{rng.randint(400, 499)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        "fax": f"+44 {rng.randint(113, 191)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        "other_date": DATES[style](_day(rng, referred, 40) + timedelta(days=3)),
        "accession": f"ACC {rng.randint(10_000_000, 99_999_999)}",
    }
    consent = rng.random() < 0.5
    labels = {name: rng.choice(pool) for name, pool in POOLS.labels.items()}
    truth: dict[str, str | bool] = {
        name: shown[name] for name in ("participant_id", "referring_clinic", "clinician", "reason")
    }
    truth.update(referral_date=referred.isoformat(), consent=consent)
    identifiers = {n: shown[n] for n in ("patient_name", "date_of_birth", "phone", "address")}
    meta = {"date_style": style}
    return Drawn(truth, shown, labels, identifiers, consent, rng.choice(POOLS.options), meta)
