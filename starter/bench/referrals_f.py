"""A sixth referral generator, written blind: the held-out split ``held_out_f``.

Written without reading anything under ``activities/`` (readers, labels,
detectors, lexicons), the fields and redaction guides, or the other five
generators' wordings and values: nothing may be tuned on it, and its figures
mean something only while that holds.

Five families (``FAMILIES``): a US e-referral printout (a header band, section
bands, a key/value grid of boxed values or a ruled table), a GP's letter (its
values in sentences, a letterhead, a "Re:" block, a signature naming the
clinician), a dense request card (labels above values, with its printed date,
a birth date and an appointment date beside the referral's), a two-page fax
(a cover sheet, then the form, each under the machine's header line with its
own stamp and fax numbers), and a form filled in by hand (oblique faces drawn
a glyph at a time, ticks and rings in ink). Label wordings, id shapes and
date styles are its own (``starter.bench.referrals_f_values``, ``_draw``). Consent is a
ticked statement that affirms or denies, a ticked or ringed Yes/No, a sentence
that agrees or refuses, or absent (then ``null``; on a boxed page the Yes/No
boxes may be printed and left empty).

Beside each file: its truth, ``<stem>.fields.json`` (split ``held_out_f``), and
what identifies the patient and every other person named, as printed, in
``<stem>.identifiers.json`` (for the redaction bench). Document ``index`` of set
``seed`` is drawn from ``random.Random(f"f:{seed}:{index}")`` and nothing else.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from starter.bench import referral_files
from starter.bench.referral_files import DrawnReferral, printed_identifiers, write_identified
from starter.bench.referrals_f_draw import draw_values
from starter.bench.referrals_f_forms import Drawn, e_referral, handwritten_form, request_card
from starter.bench.referrals_f_letters import fax_referral, gp_letter
from starter.bench.referrals_f_page import AGEING, finish

__all__ = [
    "FAMILIES",
    "SPLIT",
    "ReferralF",
    "drawn_for",
    "generate",
    "identifiers_for",
    "write_set",
]

SPLIT = "held_out_f"
#: Each family by name, drawn in this order by index.
FAMILIES = {
    family.__name__: family
    for family in (e_referral, gp_letter, request_card, fax_referral, handwritten_form)
}
identifiers_for = referral_files.identifiers_for


@dataclass
class ReferralF(DrawnReferral):
    """A referral of the sixth generator; ``shown``: its values as printed (for the tests)."""

    shown: dict[str, str] = field(default_factory=dict)


def drawn_for(family: str, rng: random.Random) -> Drawn:
    """``family``'s values, and how its boxes are marked (a hand may ring its answer)."""
    drawn = draw_values(rng, family)
    marks = ("tick", "cross", "ring") if family == "handwritten_form" else ("tick", "cross")
    drawn.meta["mark"] = rng.choice(marks)
    return drawn


def generate(index: int, seed: int) -> ReferralF:
    """Referral ``index`` of set ``seed``: the families in turn, all else drawn."""
    rng = random.Random(f"f:{seed}:{index}")
    family = list(FAMILIES)[index % len(FAMILIES)]
    drawn = drawn_for(family, rng)
    sheets = FAMILIES[family](drawn, rng)
    # A fax is always faxed; any other page may be scanned, copied or skewed.
    ageing = "faxed" if family == "fax_referral" else rng.choice(AGEING)
    said = " ".join(chain.from_iterable(sheet.printed for sheet in sheets))
    return ReferralF(
        stem=f"referral-f-{seed}-{index:04d}",
        truth=drawn.truth,
        identifiers=printed_identifiers(drawn.identifiers, said),
        pages=[finish(sheet, ageing, rng) for sheet in sheets],
        meta=drawn.meta
        | {
            "generator": "f",
            "split": SPLIT,
            "layout": family,
            "degradation": ageing,
            "pages": str(len(sheets)),
        },  # fmt: skip
        printed=said,
        shown=drawn.shown,
    )


def write_set(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` referrals, PNG (one page) or PDF (two), each beside its
    ``<stem>.fields.json`` and ``<stem>.identifiers.json``."""
    return write_identified(out, count, seed, generate)
