"""A second referral generator, independent of ``starter.bench.referrals``, and its held-out split.

The first generator draws what the field readers were first built on. This
one is drawn to differ from it in every convention real referrals vary in:
A4 pages, DejaVu serif, sans, condensed and monospace faces instead of
Pillow's; letters with the values inside their sentences, ruled tables,
boxed forms with the label above the value, two-column forms, dot-leader
printouts, banner tables, fax memos and sectioned forms with values pushed
to the right margin; labels such as "Study participant", "Subject ID",
"Pt. name"; identifiers with prefixes and separators (``SUB/2291-07``,
``RCT.2024.0117``); dates with weekdays, ordinals and two-digit years; and
consent as statements beside ticked boxes or in sentences, as often refused
as given. Several identifiers and dates stand beside the wanted ones.

**The splits.** ``tuning``: families ``TUNING`` with the common pools (and the
first generator). ``seen``: families ``SEEN`` (eform, banner, memo, sectioned)
with the ``*_RESERVED`` wordings, which were the first held-out split: measured
once through the pipeline (61.7 % of 120 fields exact, one wrong value
published), then studied and tuned on, so now tuning data; drawn exactly as
they were (the same random streams). ``held_out``: families ``HELD_OUT``
(checklist, email) with the ``*_HELD`` wordings too, written after that and
never tuned on; ``custody bench fields`` reports it on its own.

Numeric dates are day first, as the tenants' normaliser assumes. Truth goes
beside each file as ``<stem>.fields.json``, as the first generator writes it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from starter.bench.referral_files import write_referral
from starter.bench.referrals_b_forms import FAMILIES
from starter.bench.referrals_b_pages import finish
from starter.bench.referrals_b_values import draw_values

TUNING = ("letter", "table", "boxed", "two_column")
SEEN = ("eform", "banner", "memo", "sectioned")
HELD_OUT = ("checklist", "email")
#: Per split: its families, the name its random streams are keyed by, and which
#: wordings it draws (0: common; 1: and the first held-out's; 2: and today's held-out's).
SPLITS = {
    "tuning": (TUNING, "tuning", 0),
    "seen": (SEEN, "held_out", 1),
    "held_out": (HELD_OUT, "held_out_v2", 2),
}


@dataclass
class ReferralB:
    stem: str
    truth: dict[str, str | bool]
    pages: list[Image.Image]
    meta: dict[str, str]


def generate(index: int, seed: int, split: str) -> ReferralB:
    """Referral ``index`` of split ``split`` ("tuning", "seen" or "held_out") of set ``seed``."""
    families, stream, tier = SPLITS[split]
    rng = random.Random(f"b:{stream}:{seed}:{index}")
    family = families[index % len(families)]
    drawn = draw_values(rng, tier >= 1, tier >= 2)
    pages, kind = finish(FAMILIES[family](drawn), rng, seed, f"{stream}:{index}")
    # What the readers were tuned on is "tuning" to the bench, the first held-out included.
    scored = "held_out" if split == "held_out" else "tuning"
    meta = {"generator": "b", "split": scored, "set": split, "layout": family, "mark": drawn.mark}
    meta.update(degradation=kind or "none", pages=str(len(pages)), **drawn.meta)
    return ReferralB(f"referral-b-{split}-{seed}-{index:04d}", drawn.truth, pages, meta)


def write_set(out: Path, count: int, seed: int, split: str) -> list[Path]:
    """``count`` referrals of ``split`` as PNG or PDF, each with ``<stem>.fields.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for index in range(count):
        ref = generate(index, seed, split)
        dpi = {"dpi": (200, 200)}
        written.append(write_referral(out, ref.stem, ref.pages, ref.truth, ref.meta, dpi))
    return written
