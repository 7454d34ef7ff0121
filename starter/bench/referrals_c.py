"""A third referral generator, written blind: a held-out set nobody tuned on.

The first two generators (``starter.bench.referrals``, ``starter.bench.referrals_b``)
have both been in view while the field readers and the redaction detectors
were developed, so neither measures layouts the project has never seen. This
one was written without reading those readers, detectors, the document
types' label variants or the fields guide, and it must stay that way: its
figures are an honest measurement only while nothing is tuned on it.

Six families (``FAMILIES``): a hospital letter with a reference block at the
top right, a lab requisition grid with tiny labels in cell corners, a
hand-filled form on dotted lines, a two-page fax with a cover sheet, an
intake questionnaire with Yes/No columns, and a summary table with its keys
in a shaded column. Wordings, sites and identifier shapes are its own
(``starter.bench.referrals_c_values``); consent is given or refused about
equally often, as a ticked box, a sentence, a struck-through option or a
printed Y/N. Some pages are tilted, blurred, JPEG'd; the fax is 1-bit.

Truth beside each file as ``<stem>.fields.json`` (``write_referral``) with
the six referral fields the other generators carry, split ``held_out_c``.
The patient's printed name, birth date, phone and address are identifiers
only the redaction bench reads: they go in ``<stem>.identifiers.json``
(``identifiers_for``), since the fields bench counts every truth field a
referral does not extract as missing. Each document is drawn from
``random.Random(f"c:{seed}:{index}")``, so a set is the same on every machine.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from starter.bench.referral_files import by_name, identifiers_for, write_identified
from starter.bench.referrals_c_forms import handwritten, lab_grid, questionnaire
from starter.bench.referrals_c_letters import fax, letterhead, summary
from starter.bench.referrals_c_sheet import DEGRADATIONS, degrade
from starter.bench.referrals_c_values import Drawn, draw_values

__all__ = ["FAMILIES", "SPLIT", "ReferralC", "generate", "identifiers_for", "write_set"]

SPLIT = "held_out_c"
FAMILIES: dict[str, Callable[[Drawn, random.Random], list[Image.Image]]] = by_name(
    letterhead, lab_grid, handwritten, fax, questionnaire, summary
)
_CONSENT_AS = {
    "letterhead": "sentence",
    "lab_grid": "boxes",
    "handwritten": "struck",
    "fax": "printed",
    "questionnaire": "yes_no_columns",
    "summary": "sentence",
}


@dataclass
class ReferralC:
    stem: str
    truth: dict[str, str | bool]
    identifiers: dict[str, str]
    pages: list[Image.Image]
    meta: dict[str, str]


def generate(index: int, seed: int) -> ReferralC:
    """Referral ``index`` of set ``seed``: families in turn, everything else drawn."""
    rng = random.Random(f"c:{seed}:{index}")
    family = list(FAMILIES)[index % len(FAMILIES)]
    drawn = draw_values(rng)
    kind = "fax" if family == "fax" else rng.choice(DEGRADATIONS)
    pages = [degrade(page, kind, rng) for page in FAMILIES[family](drawn, rng)]
    meta = {"generator": "c", "split": SPLIT, "layout": family, "degradation": kind or "none"}
    meta.update(pages=str(len(pages)), consent_as=_CONSENT_AS[family], **drawn.meta)
    return ReferralC(f"referral-c-{seed}-{index:04d}", drawn.truth, drawn.identifiers, pages, meta)


def write_set(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` referrals as PNG or PDF, each with ``<stem>.fields.json`` and
    ``<stem>.identifiers.json``."""
    return write_identified(out, count, seed, generate)
