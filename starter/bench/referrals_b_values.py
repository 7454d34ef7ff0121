"""What the second referral generator draws: wordings, values and how dates are printed.

Each pool has its common wordings; ``*_RESERVED`` ones, drawn for the families
that were the first held-out split (measured once, studied, now tuned on); and
``*_HELD`` ones, drawn only for today's held-out split (``starter.bench.referrals_b``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

#: Label wordings per field: common ones, and ones drawn only in the held-out split.
LABELS: dict[str, tuple[str, ...]] = {
    "participant_id": (
        "Study participant",
        "Subject ID",
        "Participant ref.",
        "Trial ID",
        "Study no.",
    ),
    "referral_date": ("Date of referral", "Referral date", "Date", "Dated"),
    "clinician": ("Referrer", "Referring doctor", "Referring clinician", "GP"),
    "referring_clinic": ("Practice", "Referring practice", "Surgery", "Clinic name"),
    "reason": ("Reason for referral", "Clinical details", "Presenting problem", "Reason"),
    "consent": ("Consent to share", "Consent to share information", "Consent"),
    "patient": ("Pt. name", "Patient name", "Name"),
    "dob": ("D.O.B.", "Date of birth", "Born"),
    "nhs": ("NHS No.", "Hospital no.", "MRN"),
    "other_date": ("Appointment date", "Date seen", "Last seen"),
}
LABELS_RESERVED: dict[str, tuple[str, ...]] = {
    "participant_id": (
        "Subject no.",
        "Study participant no.",
        "Trial participant ID",
        "Study code",
    ),
    "referral_date": ("Ref. date", "Date of this referral", "Referral sent"),
    "clinician": ("Requesting clinician", "Referred by (name)"),
    "referring_clinic": ("Referring site", "Referring unit"),
    "reason": ("Referral reason", "Clinical summary"),
    "consent": ("Agrees to share", "Data sharing consent"),
    "patient": ("Patient", "Pt name"),
    "dob": ("DOB", "Birth date"),
    "nhs": ("NHS number", "Unit no."),
    "other_date": ("Clinic date", "Date of visit"),
}
CLINICS = (
    "Castlegate Surgery",
    "Millbrook Medical Practice",
    "St Anne's Health Centre",
    "Westfield Family Clinic",
    "Juniper Lane Surgery",
    "Bramley Road Medical Centre",
)
CLINICIANS = (
    "Dr Hannah Whitfield",
    "Dr. R. Mensah",
    "Prof. Ilse Brandt",
    "Dr Oluwaseun Adeyemi",
    "Dr. Mei-Ling Chau",
    "Dr Peter O'Connell",
)
PATIENTS = ("Jane Okoye", "Arthur Pennington", "Siobhan Clarke", "Tariq Hussain", "Ewa Nowak")
REASONS = (
    "Worsening asthma control",
    "Unexplained weight loss",
    "Chronic lower back pain",
    "Possible coeliac disease",
    "Atrial fibrillation follow-up",
    "Persistent hoarse voice",
    "Raised blood pressure",
)
MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July"),
    *("August", "September", "October", "November", "December"),
)
_ID_FORMATS = ("SUB-{:04d}-{:02d}", "STU/{:05d}", "KX{:04d}", "P{:03d} {:03d}")
_ID_FORMATS_RESERVED = ("RCT.2024.{:04d}", "T{:01d}-{:05d}", "SP/{:02d}/{:04d}")
_ID_FORMATS_HELD = ("VOL-{:05d}", "{:02d}-{:04d}-07")
LABELS_HELD: dict[str, tuple[str, ...]] = {
    "participant_id": ("Participant code", "Volunteer ID", "Study subject number"),
    "referral_date": ("Date of request", "Requested on"),
    "clinician": ("Requested by", "Referring professional"),
    "referring_clinic": ("Originating clinic", "Referred from"),
    "reason": ("What is the problem?", "Reason for request"),
    "consent": ("Has the patient consented to sharing?", "Information sharing agreed?"),
    "patient": ("Full name",),
    "dob": ("Date of birth",),
    "nhs": ("NHS no",),
    "other_date": ("Next clinic date",),
}


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


DATES: dict[str, Callable[[date], str]] = {
    "long": lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",
    "slash": lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
    "dots": lambda d: f"{d.day}.{d.month}.{d.year}",
    "iso": lambda d: d.isoformat(),
    "us": lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
    "ordinal": lambda d: f"{_ordinal(d.day)} {MONTHS[d.month - 1]} {d.year}",
}
DATES_HELD: dict[str, Callable[[date], str]] = {
    "short_mon_yy": lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year % 100:02d}",
    "ymd_slash": lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",
}
DATES_RESERVED: dict[str, Callable[[date], str]] = {
    "upper_mon": lambda d: f"{d.day:02d}-{MONTHS[d.month - 1][:3].upper()}-{d.year}",
    "weekday": lambda d: f"{d.strftime('%A')} {d.day} {MONTHS[d.month - 1]} {d.year}",
    "short_year": lambda d: f"{d.day}/{d.month}/{d.year % 100:02d}",
    "ordinal_of": lambda d: f"{_ordinal(d.day)} of {MONTHS[d.month - 1]}, {d.year}",
}


@dataclass
class Drawn:
    """What one referral shows: wordings, values as printed, and how consent is put."""

    rng: random.Random
    #: The first held-out split's wordings are drawn (its families, and today's held-out).
    held_out: bool
    labels: dict[str, str]
    shown: dict[str, str]
    truth: dict[str, str | bool]
    mark: str
    meta: dict[str, str] = field(default_factory=dict)
    #: Today's held-out wordings are drawn too.
    fresh: bool = False

    def date(self, when: date) -> str:
        styles = {**DATES, **DATES_RESERVED} if self.held_out else DATES
        styles = {**styles, **DATES_HELD} if self.fresh else styles
        return styles[self.rng.choice(sorted(styles))](when)


def draw_values(rng: random.Random, held_out: bool, fresh: bool = False) -> Drawn:
    """The document's values, its label wordings and the distractors beside them."""
    pools = {k: v + (LABELS_RESERVED[k] if held_out else ()) for k, v in LABELS.items()}
    if fresh:
        pools = {k: v + LABELS_HELD[k] for k, v in pools.items()}
    labels = {name: rng.choice(options) for name, options in pools.items()}
    formats = _ID_FORMATS + (_ID_FORMATS_RESERVED if held_out else ())
    formats += _ID_FORMATS_HELD if fresh else ()
    pid = rng.choice(formats).format(rng.randrange(1, 10**3), rng.randrange(100))
    referred = date(2025, 2, 1) + timedelta(days=rng.randrange(640))
    truth: dict[str, str | bool] = {
        "referral_date": referred.isoformat(),
        "participant_id": pid,
        "consent": rng.random() < 0.5,
        "referring_clinic": rng.choice(CLINICS),
        "clinician": rng.choice(CLINICIANS),
        "reason": rng.choice(REASONS),
    }
    marks = ("cross", "tick", "filled", "slash") if held_out else ("cross", "tick")
    drawn = Drawn(rng, held_out, labels, {}, truth, rng.choice(marks), fresh=fresh)
    drawn.shown.update(
        {k: str(v) for k, v in truth.items() if k not in ("consent", "referral_date")},
        referral_date=drawn.date(referred),
        dob=drawn.date(date(1938, 1, 1) + timedelta(days=rng.randrange(27000))),
        other_date=drawn.date(referred + timedelta(days=rng.choice((-40, -9, 12, 30)))),
        patient=rng.choice(PATIENTS),
        nhs=f"{rng.randrange(400, 800)} {rng.randrange(100, 1000)} {rng.randrange(1000, 10000)}",
    )
    return drawn
