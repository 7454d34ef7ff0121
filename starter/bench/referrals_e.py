"""A fifth referral generator, written blind: the held-out split ``held_out_e``.

Written without reading anything under ``activities/`` (readers, labels,
detectors, lexicons) or the fields guide, and with conventions unlike the
other four generators': nothing may be tuned on it, and its figures mean
something only while that holds.

Six families (``FAMILIES``): a form with comb boxes (one character per box)
for the ids and dates, notes with labels in a ruled left gutter, a two-page
table with merged cells and a medication list, a letter whose values sit in
spoken sentences under a "Re:" line, a printed e-mail whose "Sent:" time is
the referral date, and a two-column summary with labels above values. Dates
are written with times of day, Roman-numeral months, upper-case months and
ISO "T" stamps (``starter.bench.referrals_e_values``). Consent is a question
whose answer is ticked or ringed, a crossed box beside a statement that
affirms or denies, a sentence that affirms, refuses or negates, or absent
(then ``null``: a careful reader records it as unknown). Pages may be tilted,
faxed or photocopied (``starter.bench.referrals_e_page``).

Truth beside each file as ``<stem>.fields.json`` (split ``held_out_e``); the
patient's and every other person's identifiers as printed in
``<stem>.identifiers.json`` for the redaction bench. Each document is drawn
from ``random.Random(f"e:{seed}:{index}")`` alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from starter.bench.referral_files import (
    DrawnReferral,
    by_name,
    identifiers_for,
    printed_identifiers,
    write_identified,
)
from starter.bench.referrals_e_forms import comb_form, gutter_notes, merged_table
from starter.bench.referrals_e_letters import email_printout, speech_letter, two_column
from starter.bench.referrals_e_page import AGEING, Sheet, finish
from starter.bench.referrals_e_values import Drawn, draw_values

__all__ = ["FAMILIES", "SPLIT", "ReferralE", "generate", "identifiers_for", "write_set"]

SPLIT = "held_out_e"
FAMILIES: dict[str, Callable[[Drawn, random.Random], list[Sheet]]] = by_name(
    comb_form, gutter_notes, merged_table, speech_letter, email_printout, two_column
)
#: Families whose consent may be a ticked or ringed answer (the others write sentences).
_MARKS = frozenset({"comb_form", "gutter_notes", "merged_table", "two_column"})


@dataclass
class ReferralE(DrawnReferral):
    """One referral of the fifth generator, with its values as printed (for the tests)."""

    shown: dict[str, str] = field(default_factory=dict)


def generate(index: int, seed: int) -> ReferralE:
    """Referral ``index`` of set ``seed``: families in turn, everything else drawn."""
    rng = random.Random(f"e:{seed}:{index}")
    family = list(FAMILIES)[index % len(FAMILIES)]
    drawn = draw_values(rng, marks=family in _MARKS)
    ageing = rng.choice(AGEING)
    sheets = FAMILIES[family](drawn, rng)
    banner = f"{drawn.shown['printed']}  {drawn.shown['clinic_phone']}"
    pages = [finish(sheet, ageing, rng, f"{banner}  {n}/{len(sheets)}") for n, sheet in
             enumerate(sheets, 1)]  # fmt: skip
    said = " ".join(text for sheet in sheets for text in sheet.printed)
    meta = {"generator": "e", "split": SPLIT, "layout": family, "degradation": ageing}
    meta.update(pages=str(len(pages)), **drawn.meta)
    stem = f"referral-e-{seed}-{index:04d}"
    found = printed_identifiers(drawn.identifiers, said)
    return ReferralE(stem, drawn.truth, found, pages, meta, said, drawn.shown)


def write_set(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` referrals as PNG (one page) or PDF (two), each with ``<stem>.fields.json``
    and ``<stem>.identifiers.json``."""
    return write_identified(out, count, seed, generate)
