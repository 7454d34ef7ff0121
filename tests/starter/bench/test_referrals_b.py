"""The second referral generator: its own conventions, its truth, a held-out split kept apart."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

from starter.bench import referrals, referrals_b_values
from starter.bench.referrals_b import HELD_OUT, TUNING, generate, write_set


def _digest(index: int, seed: int, split: str) -> str:
    ref = generate(index, seed, split)
    return hashlib.sha256(b"".join(page.tobytes() for page in ref.pages)).hexdigest()


def test_referrals_b_same_seed_same_pixels() -> None:
    """A referral is drawn from its (split, seed, index) alone."""
    assert _digest(3, 11, "tuning") == _digest(3, 11, "tuning")
    assert _digest(3, 11, "tuning") != _digest(3, 12, "tuning")
    assert _digest(3, 11, "tuning") != _digest(3, 11, "held_out")


def test_referrals_b_write_truth_and_keep_the_splits_apart(tmp_path: Path) -> None:
    """Each split draws only its own families; truth has ISO dates and a boolean consent."""
    for split, families in (("tuning", TUNING), ("held_out", HELD_OUT)):
        seen = set()
        for path in write_set(tmp_path / split, 8, seed=2, split=split):
            truth = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())
            assert truth["type"] == "referral" and truth["drawn"]["split"] == split
            date.fromisoformat(truth["fields"]["referral_date"])
            assert isinstance(truth["fields"]["consent"], bool)
            seen.add(truth["drawn"]["layout"])
        assert seen == set(families)
    assert not set(TUNING) & set(HELD_OUT)


def test_referrals_b_reserved_wordings_are_drawn_only_for_the_held_out_split() -> None:
    """No label wording of the reserved pools appears in a tuning referral's drawing."""
    reserved = {w for pool in referrals_b_values.LABELS_RESERVED.values() for w in pool}
    import random

    for index in range(60):
        drawn = referrals_b_values.draw_values(random.Random(index), held_out=False)
        assert not set(drawn.labels.values()) & reserved
    held = [referrals_b_values.draw_values(random.Random(i), held_out=True) for i in range(60)]
    assert any(set(d.labels.values()) & reserved for d in held)


def test_referrals_b_differ_from_the_first_generators_conventions() -> None:
    """Page size and the wordings of the identifier's and the date's labels are not the first's."""
    first = referrals.generate(0, 1)
    second = generate(0, 1, "tuning")
    assert first.pages[0].size != second.pages[0].size
    for name in ("participant_id", "referral_date"):
        assert not set(referrals.LABELS[name]) & set(referrals_b_values.LABELS[name]), name
