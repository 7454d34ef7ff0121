"""The synthetic referral set: the same documents for the same seed, with truth beside each."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import pypdfium2

from starter.bench.referrals import LAYOUTS, generate, write_set


def _digest(index: int, seed: int) -> str:
    ref = generate(index, seed)
    return hashlib.sha256(b"".join(page.tobytes() for page in ref.pages)).hexdigest()


def test_referrals_same_seed_same_pixels() -> None:
    """A referral is drawn from its (seed, index) alone; another seed draws another one."""
    assert _digest(5, 11) == _digest(5, 11)
    assert _digest(5, 11) != _digest(5, 12)


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
