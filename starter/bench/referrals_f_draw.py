"""The sixth generator's draw: one referral's people, numbers and dates, for its family.

A US page (the e-referral, some faxes) gets a US practice, month-first dates,
an SSN and a plan member ID; the others a British practice, an NHS number and
a private insurer's. No two people on a page share a surname, and a patient's
title, pronoun and first name agree; so do a next of kin's relation and name.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from functools import partial

from starter.bench.referral_files import DrawnValues, page_identifiers, referral_truth
from starter.bench.referrals_f_values import (
    DATES,
    LABELS,
    LETTER_STYLES,
    OTHER,
    REASONS,
    UK_CLINICS,
    UK_STYLES,
    UNITS,
    US_CLINICS,
    US_STYLES,
    Consent,
    draw_consent,
    table,
    words,
)

_FEMALE = words("""
    Imogen Priya Mairead Beatriz Niamh Esther Agnieszka Hana Marisol Winifred Farah Rosalind
""")
_MALE = words("""
    Tobias Kofi Oluwaseun Henrik Callum Yusuf Dmitri Ravi Desmond Lorcan Tomasz Jasper
""")
_SURNAMES = words("""
    Tallis Fenwick Okonkwo Aldersley Penrose Idowu Marchetti Quill Haverford Lindqvist
    Szymanski Abernethy Varga Castellanos Nakagawa Oyebanji Drummond Kowalczyk Farrant
    Bhattacharya Ellery Rourke Tregarthen Whitlock Ashdown Galloway Iqbal Jessop
""")
_STUDIES = table("""
    KESTREL: KST
    ORWELL: ORW
    TIDAL: TDL
    HELIX: HLX
    CASCADE: CAS
    MARLIN: MRL
    BEACON: BCN
""")
_STREETS = words("Quarry Larch Tanner's Millbrook Coldharbour Ferndale Wren Osier Pendle Saffron")
_TOWNS = words("Brackenfold Saltcote Thornwick Eddersby Kilnsey Hollinsby")
_US_TOWNS = ("Millbrook, OH", "Cedar Falls, IA", "Harlan, KY", "Westfield, IN", "Dunmore, PA")
_US_KINDS = ("St", "Ave", "Rd")
#: A next of kin's relation, by whether the kin's name is a woman's.
_KIN = {True: words("wife daughter sister partner neighbour"),
        False: words("husband son brother partner neighbour")}  # fmt: skip


#: Each family: (region "uk", "us" or "either", boxes to tick, its date styles).
FAMILY = {
    "e_referral": ("us", True, US_STYLES),
    "gp_letter": ("uk", False, LETTER_STYLES),
    "request_card": ("uk", True, UK_STYLES),
    "fax_referral": ("either", True, ()),
    "handwritten_form": ("uk", True, UK_STYLES),
}


def draw_values(rng: random.Random, family: str) -> DrawnValues[Consent]:
    """One referral's values for ``family``: truth, what is printed, labels, identifiers."""
    region, marks, styles = FAMILY[family]
    us = region == "us" or (region == "either" and rng.random() < 0.4)
    style = rng.choice(styles or (US_STYLES if us else UK_STYLES))
    referred = date(2024, 1, 1) + timedelta(days=rng.randrange(1090))
    consent = draw_consent(rng, marks=marks)
    shown = _people(rng, us) | _numbers(rng, us) | _dates(rng, referred, style, us)
    study = rng.choice(list(_STUDIES))
    shown |= {
        "participant_id": _participant(rng, _STUDIES[study][0]),
        "study": study,
        "referring_clinic": rng.choice(US_CLINICS if us else UK_CLINICS),
        "reason": rng.choice(REASONS),
        "unit": rng.choice(UNITS),
        "region": "us" if us else "uk",
    }
    labels = {name: rng.choice(pool) for name, pool in (LABELS | OTHER).items()}
    ids = (("SSN", "Soc. Sec. #"), ("Member ID", "Plan member #")) if us else (
        ("NHS no.", "NHS number"), ("Insurer no.", "Private cover no."))  # fmt: skip
    labels |= {"other_id": rng.choice(ids[0]), "other_id_2": rng.choice(ids[1])}
    truth = referral_truth(shown, referred, consent.truth)
    identifiers = page_identifiers(shown) | {"other_id_2": shown["other_id_2"]}
    meta = {"consent_as": consent.mode, "date_style": style, "region": shown["region"]}
    return DrawnValues(truth, shown, labels, identifiers, consent, meta)


def _people(rng: random.Random, us: bool) -> dict[str, str]:
    """The patient, the clinician and three others, no two sharing a surname."""
    female = rng.random() < 0.5
    first, last = rng.sample(_FEMALE + _MALE, 5), rng.sample(_SURNAMES, 5)
    first[0] = rng.choice([n for n in (_FEMALE if female else _MALE) if n not in first[1:]])
    f, s = first[1], last[1]
    forms = (f"{f} {s}, MD", f"{s}, {f} MD", f"{f} {s}, DO", f"Dr. {f} {s}") if us else (
        f"Dr {f} {s}", f"Dr {f[0]}. {s}", f"Dr. {f} {s}")  # fmt: skip
    return {
        "patient_name": f"{first[0]} {last[0]}",
        "title": rng.choice(("Mrs", "Ms", "Miss")) if female else "Mr",
        "who": "She" if female else "He",
        "their": "her" if female else "his",
        "clinician": rng.choice(forms),
        "clinician_name": f"{f} {s}",
        "other_person_1": f"{first[2]} {last[2]}",
        "kin": rng.choice(_KIN[first[2] in _FEMALE]),
        "other_person_2": f"{first[3]} {last[3]}",
        "other_person_3": f"{first[4]} {last[4]}",
    }


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _numbers(rng: random.Random, us: bool) -> dict[str, str]:
    """The patient's numbers and phone, the clinic's and the referral's own numbers."""
    d = partial(_digits, rng)
    street = f"{rng.randint(2, 240)} {rng.choice(_STREETS)}"
    if us:
        area = rng.choice(("312", "614", "317", "515"))
        return {
            "mrn": rng.choice((d(9), f"E{d(7)}")), "other_id": f"{d(3)}-{d(2)}-{d(4)}",
            "other_id_2": f"MBR-{d(4)}-{d(4)}", "phone": f"({area}) 555-01{d(2)}",
            "address": f"{street} {rng.choice(_US_KINDS)}, {rng.choice(_US_TOWNS)} {d(5)}",
            "clinic_phone": f"({area}) 555-02{d(2)}", "clinic_fax": f"({area}) 555-03{d(2)}",
            "unit_fax": f"(614) 555-04{d(2)}", "npi": d(10), "order": f"ORD{d(8)}",
        }  # fmt: skip
    area, tail = rng.choice(("WX", "SL", "TK", "EB")), rng.sample("ABDEFGHJLNPQRSTUWXY", 2)
    postcode = f"{area}{rng.randint(1, 19)} {d(1)}{''.join(tail)}"
    kind = rng.choice(("Lane", "Road", "Close", "Terrace"))
    return {
        "mrn": rng.choice((f"K{d(7)}", f"RX{d(6)}", f"{d(2)}-{d(5)}")),
        "other_id": f"{d(3)} {d(3)} {d(4)}", "other_id_2": f"BPA {d(8)}",
        "phone": rng.choice((f"07700 900{d(3)}", f"01632 960{d(3)}")),
        "address": f"{street} {kind}, {rng.choice(_TOWNS)}, {postcode}",
        "clinic_phone": f"01632 961{d(3)}", "clinic_fax": f"01632 962{d(3)}",
        "unit_fax": f"0161 496 0{d(3)}", "npi": f"GMC {d(7)}", "order": f"RF/{d(2)}/{d(5)}",
    }  # fmt: skip


def _dates(rng: random.Random, referred: date, style: str, us: bool) -> dict[str, str]:
    """The referral date as printed and the page's other dates: in the same style, but a
    birth date in figures where the style spells out a weekday or month, and the fax's
    own stamp."""
    show = DATES[style]
    numeric = style not in ("ordinal", "long", "weekday", "us_long", "short_mon")
    born_show = show if numeric else DATES["us" if us else "dmy"]
    born = date(1934, 1, 1) + timedelta(days=rng.randrange(26000))
    sent = referred + timedelta(days=rng.randint(0, 3))
    clock = f"{rng.randint(7, 18):02d}:{rng.randrange(60):02d}"
    stamp = rng.choice(("%b-%d-%Y", "%d/%m/%Y", "%Y-%m-%d", "%d %b %y") if not us else (
        "%b-%d-%Y", "%m/%d/%Y", "%Y-%m-%d"))  # fmt: skip
    return {
        "referral_date": show(referred),
        "date_of_birth": born_show(born),
        "appointment": show(referred + timedelta(days=rng.randint(9, 70))),
        "seen": show(referred - timedelta(days=rng.randint(2, 40))),
        "printed": show(referred - timedelta(days=rng.randint(200, 900))),
        "sent": show(sent),
        "fax_stamp": f"{sent.strftime(stamp).upper()} {clock}",
    }


def _participant(rng: random.Random, prefix: str) -> str:
    """A participant ID: the study's prefix (or a site letter) and digits, variously joined."""
    d = partial(_digits, rng)
    letter = rng.choice("ABCDEFGHJKLMNPRSTVWXZ")
    shapes = (
        f"{prefix}-{d(4)}-{d(2)}", f"{prefix}/{d(4)}/{letter}", f"{prefix} {d(3)} {d(3)}",
        f"{prefix}.{d(5)}", f"{letter}{d(1)}-{d(2)}-{d(4)}", f"{prefix}{d(4)}{letter}",
        f"{prefix}_S{d(2)}_{d(3)}",
    )  # fmt: skip
    return rng.choice(shapes)
