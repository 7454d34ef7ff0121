"""A seventh referral generator, written blind: the held-out split ``held_out_g``.

Written without reading anything under ``activities/`` (readers, labels,
detectors, lexicons), the fields and redaction guides, or the other six
generators' wordings, values and layouts: nothing may be tuned on it, and its
figures mean something only while that holds.

Five families (``FAMILIES``): a form whose labels run to their values along
dotted leaders, a wide table whose labels form a shaded header row over the
values (``starter.bench.referrals_g_forms``), a numbered questionnaire answered
on the line under each question, a record system's screen print (title bar,
tabs, a patient banner, small-capital labels over bold values), and a clinic
note in S/O/A/Plan form under a patient sticker pasted askew, its labels after
their values and its reason inside the Plan (``referrals_g_letters``). Label
wordings, study numbers (with a check letter), date styles (each family its
own), clinics, people and reasons are its own (``referrals_g_values``). Every
page carries distractors: the date it was typed or printed, the birth date, an
appointment, another number (NHS, laboratory or insurer), the GP and the
typist, the clinic's telephone and fax. Consent is a ticked statement that
affirms or denies, a ringed or radio answer, a sentence that agrees or
refuses, or absent (then ``null``; on a marked page the question may be
printed and left unanswered).

Beside each file: its truth, ``<stem>.fields.json`` (split ``held_out_g``), and
what identifies the patient and every other person named, as printed, in
``<stem>.identifiers.json`` (for the redaction bench). Document ``index`` of set
``seed`` is drawn from ``random.Random(f"g:{seed}:{index}")`` and nothing else.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from starter.bench import referral_files
from starter.bench.referral_files import DrawnReferral, printed_identifiers, write_identified
from starter.bench.referrals_g_forms import header_row_table, leader_form, numbered_questionnaire
from starter.bench.referrals_g_letters import clinic_note, ehr_screen
from starter.bench.referrals_g_page import AGEING, age
from starter.bench.referrals_g_values import Drawn, draw_values

__all__ = [
    "FAMILIES",
    "SPLIT",
    "ReferralG",
    "drawn_for",
    "generate",
    "identifiers_for",
    "write_set",
]

SPLIT = "held_out_g"
#: Each family by name, drawn in this order by index.
FAMILIES = {
    family.__name__: family
    for family in (leader_form, header_row_table, numbered_questionnaire, ehr_screen, clinic_note)
}
#: How each family marks a box: a screen ticks (its radios are filled); paper ticks or crosses.
_MARKS = {"ehr_screen": ("tick",)}
identifiers_for = referral_files.identifiers_for


@dataclass
class ReferralG(DrawnReferral):
    """A referral of the seventh generator; ``shown``: its values as printed (for the tests)."""

    shown: dict[str, str] = field(default_factory=dict)


def drawn_for(family: str, rng: random.Random) -> Drawn:
    """``family``'s values, and how its boxes are marked."""
    drawn = draw_values(rng, family)
    drawn.meta["mark"] = rng.choice(_MARKS.get(family, ("tick", "cross")))
    return drawn


def generate(index: int, seed: int) -> ReferralG:
    """Referral ``index`` of set ``seed``: the families in turn, all else drawn."""
    rng = random.Random(f"g:{seed}:{index}")
    family = list(FAMILIES)[index % len(FAMILIES)]
    drawn = drawn_for(family, rng)
    sheets = FAMILIES[family](drawn, rng)
    ageing = rng.choice(AGEING)
    said = " ".join(chain.from_iterable(sheet.printed for sheet in sheets))
    return ReferralG(
        stem=f"referral-g-{seed}-{index:04d}",
        truth=drawn.truth,
        identifiers=printed_identifiers(drawn.identifiers, said),
        pages=[age(sheet, ageing, rng) for sheet in sheets],
        meta=drawn.meta
        | {
            "generator": "g",
            "split": SPLIT,
            "layout": family,
            "degradation": ageing,
            "pages": str(len(sheets)),
        },  # fmt: skip
        printed=said,
        shown=drawn.shown,
    )


def write_set(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` referrals, each a PNG page beside its ``<stem>.fields.json`` and
    ``<stem>.identifiers.json``."""
    return write_identified(out, count, seed, generate)
