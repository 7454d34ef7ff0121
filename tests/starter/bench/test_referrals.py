"""The synthetic referral set: the same documents for the same seed, with truth beside each.

The determinism test here covers the third to sixth generators too (same call shape)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pypdfium2
import pytest

from starter.bench import referrals_c, referrals_d, referrals_e, referrals_f, referrals_g
from starter.bench.referrals import LAYOUTS, generate, write_set


def _digest(ref: Any) -> str:
    return hashlib.sha256(b"".join(page.tobytes() for page in ref.pages)).hexdigest()


@pytest.mark.parametrize(
    ("draw", "index", "seed"),
    [
        (generate, 5, 11),
        (referrals_c.generate, 3, 11),
        (referrals_d.generate, 4, 7),
        (referrals_e.generate, 4, 7),
        (referrals_f.generate, 3, 7),
        (referrals_g.generate, 3, 7),
    ],
    ids=["referrals", "referrals_c", "referrals_d", "referrals_e", "referrals_f", "referrals_g"],
)
def test_referrals_same_seed_same_pixels(
    draw: Callable[[int, int], Any], index: int, seed: int
) -> None:
    """A referral is drawn from its (seed, index) alone; another seed draws another one."""
    first, again, other = draw(index, seed), draw(index, seed), draw(index, seed + 1)
    assert _digest(first) == _digest(again) != _digest(other)
    assert first.truth == again.truth
    assert getattr(first, "identifiers", None) == getattr(again, "identifiers", None)


def test_referrals_write_truth_beside_every_file(tmp_path: Path) -> None:
    """Every layout appears; each file has a fields.json with ISO dates and a boolean consent."""
    paths = write_set(tmp_path, 8, seed=3)
    layouts = set()
    for path in paths:
        truth = json.loads(path.with_suffix(".fields.json").read_text())
        assert truth["type"] == "referral"
        fields = truth["fields"]
        date.fromisoformat(fields["referral_date"])
        assert isinstance(fields["consent"], bool) and fields["participant_id"].strip()
        layouts.add(truth["drawn"]["layout"])
        if path.suffix == ".pdf":  # the fax layout: a cover sheet, then the form
            assert len(pypdfium2.PdfDocument(path)) == 2
    assert layouts == set(LAYOUTS)
