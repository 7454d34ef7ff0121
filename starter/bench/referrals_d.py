"""A fourth referral generator, written blind: the held-out split ``held_out_d``.

The other three generators (``starter.bench.referrals``, ``referrals_b``,
``referrals_c``) have been in view while the field readers and redaction
detectors were developed or measured. This one was written without reading
anything under ``activities/`` (readers, labels, detectors, lexicons) or the
fields guide, and nothing may be tuned on it: its figures mean something
only while that holds.

Six families (``FAMILIES``): a GP's letter with the values inside its
sentences and the partners in a sidebar, a coordinator's memo with labels
far from their values, a two-column e-referral with labels above values, a
boxed grid with labels in the boxes' corners, a two-page clinic table with
a medication list, and a US intake sheet with month-first dates (its labels
say so). Wordings, people, sites, identifier shapes and date styles are its
own (``starter.bench.referrals_d_values``). Consent is a ticked box whose
statement affirms or denies, an option pair, a sentence that affirms,
refuses, negates or raises no objection, or absent (then the truth's consent
is ``null``: a careful reader records it as unknown, and the bench counts any
value published for it as wrong). Pages may be skewed, scanned dusty,
photocopied or faxed (``starter.bench.referrals_d_page``).

Truth beside each file as ``<stem>.fields.json`` (the six referral fields,
split ``held_out_d``); the patient's and every other person's identifiers
as printed in ``<stem>.identifiers.json`` (``identifiers_for``) for the
redaction bench. Each document is drawn from ``random.Random(f"d:{seed}:{index}")``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from starter.bench.referral_files import (
    DrawnReferral,
    by_name,
    identifiers_for,
    printed_identifiers,
    write_identified,
)
from starter.bench.referrals_d_forms import boxed, eform, med_table, us_intake
from starter.bench.referrals_d_letters import gp_letter, research_memo
from starter.bench.referrals_d_page import DEGRADATIONS, Page, degrade
from starter.bench.referrals_d_values import Drawn, draw_values

__all__ = [
    "FAMILIES", "SPLIT", "ReferralD", "generate", "identifiers_for", "printed_identifiers",
    "write_set",
]  # fmt: skip

SPLIT = "held_out_d"
FAMILIES: dict[str, Callable[[Drawn, random.Random], list[Page]]] = by_name(
    gp_letter, research_memo, eform, boxed, med_table, us_intake
)
#: Families whose consent may be boxes (the others write it as a sentence).
_BOXES = frozenset({"research_memo", "eform", "boxed", "med_table", "us_intake"})


#: One referral of the fourth generator.
ReferralD = DrawnReferral


def generate(index: int, seed: int) -> ReferralD:
    """Referral ``index`` of set ``seed``: families in turn, everything else drawn."""
    rng = random.Random(f"d:{seed}:{index}")
    family = list(FAMILIES)[index % len(FAMILIES)]
    drawn = draw_values(rng, us=family == "us_intake", boxes=family in _BOXES)
    kind = rng.choice(DEGRADATIONS)
    header = (
        f"{drawn.shown['printed']} 09:{rng.randint(10, 59)}  FROM {drawn.shown['clinic_phone']}"
    )
    drawn_pages = FAMILIES[family](drawn, rng)
    pages = [degrade(p.image, kind, rng, f"{header}  P.{n}") for n, p in enumerate(drawn_pages, 1)]
    said = " ".join(line for page in drawn_pages for line in page.printed)
    meta = {"generator": "d", "split": SPLIT, "layout": family, "degradation": kind or "none"}
    meta.update(pages=str(len(pages)), **drawn.meta)
    found = printed_identifiers(drawn.identifiers, said)
    stem = f"referral-d-{seed}-{index:04d}"
    return ReferralD(stem, drawn.truth, found, pages, meta, said)


def write_set(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` referrals as PNG (one page) or PDF (two), each with ``<stem>.fields.json``
    and ``<stem>.identifiers.json``."""
    return write_identified(out, count, seed, generate)
