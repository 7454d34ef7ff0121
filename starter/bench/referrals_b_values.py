"""What the second referral generator draws: wordings, values and how dates are printed.

Each pool (``data/referrals_b.json``) has its common wordings; ``*_reserved`` ones,
drawn for the families that were the first held-out split (measured once, studied,
now tuned on); and ``*_held`` ones, drawn only for today's held-out split
(``starter.bench.referrals_b``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from starter.bench.pools import date_styles, pools
from starter.bench.referral_files import drawn_truth

#: Label wordings per field, clinics, clinicians, patients, reasons, participant ID
#: formats, date styles, and the consent wordings ``referrals_b_pages`` prints.
POOLS = pools("referrals_b")
DATES = date_styles(POOLS.dates)
DATES_RESERVED = date_styles(POOLS.dates_reserved)
DATES_HELD = date_styles(POOLS.dates_held)


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
    wordings = {
        k: v + (POOLS.labels_reserved[k] if held_out else ()) for k, v in POOLS.labels.items()
    }
    if fresh:
        wordings = {k: v + POOLS.labels_held[k] for k, v in wordings.items()}
    labels = {name: rng.choice(options) for name, options in wordings.items()}
    formats = POOLS.id_formats + (POOLS.id_formats_reserved if held_out else ())
    formats += POOLS.id_formats_held if fresh else ()
    pid = rng.choice(formats).format(rng.randrange(1, 10**3), rng.randrange(100))
    referred = date(2025, 2, 1) + timedelta(days=rng.randrange(640))
    truth = drawn_truth(rng, POOLS, referred, pid, given=0.5)
    marks = ("cross", "tick", "filled", "slash") if held_out else ("cross", "tick")
    drawn = Drawn(rng, held_out, labels, {}, truth, rng.choice(marks), fresh=fresh)
    drawn.shown.update(
        {k: str(v) for k, v in truth.items() if k not in ("consent", "referral_date")},
        referral_date=drawn.date(referred),
        dob=drawn.date(date(1938, 1, 1) + timedelta(days=rng.randrange(27000))),
        other_date=drawn.date(referred + timedelta(days=rng.choice((-40, -9, 12, 30)))),
        patient=rng.choice(POOLS.patients),
        nhs=f"{rng.randrange(400, 800)} {rng.randrange(100, 1000)} {rng.randrange(1000, 10000)}",
    )
    return drawn
