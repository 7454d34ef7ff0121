"""The second referral generator: its own conventions, its truth, a held-out split kept apart."""

from __future__ import annotations

import hashlib
import json
import random
from datetime import date
from pathlib import Path

from starter.bench import referrals, referrals_b_values
from starter.bench.referrals_b import HELD_OUT, SEEN, TUNING, generate, write_set


def _digest(index: int, seed: int, split: str) -> str:
    ref = generate(index, seed, split)
    return hashlib.sha256(b"".join(page.tobytes() for page in ref.pages)).hexdigest()


def test_referrals_b_same_seed_same_pixels() -> None:
    """A referral is drawn from its (split, seed, index) alone."""
    assert _digest(3, 11, "tuning") == _digest(3, 11, "tuning")
    assert _digest(3, 11, "tuning") != _digest(3, 12, "tuning")
    assert _digest(3, 11, "tuning") != _digest(3, 11, "held_out")


def test_referrals_b_write_truth_and_keep_the_splits_apart(tmp_path: Path) -> None:
    """Each set draws only its own families; truth has ISO dates and a boolean consent; the
    first held-out set, tuned on since, is scored as tuning."""
    for split, families in (("tuning", TUNING), ("seen", SEEN), ("held_out", HELD_OUT)):
        seen = set()
        for path in write_set(tmp_path / split, 8, seed=2, split=split):
            truth = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())
            scored = "held_out" if split == "held_out" else "tuning"
            assert truth["type"] == "referral" and truth["drawn"]["split"] == scored
            date.fromisoformat(truth["fields"]["referral_date"])
            assert isinstance(truth["fields"]["consent"], bool)
            seen.add(truth["drawn"]["layout"])
        assert seen == set(families)
    assert not set(TUNING) & set(HELD_OUT) and not set(SEEN) & set(HELD_OUT)


def test_referrals_b_held_out_wordings_are_drawn_only_for_the_held_out_split() -> None:
    """No wording of the held-out pools appears in a tuning or seen referral's drawing."""
    held = {w for pool in referrals_b_values.POOLS.labels_held.values() for w in pool}
    held -= {w for pool in referrals_b_values.POOLS.labels.values() for w in pool}
    for index in range(60):
        for tier in (False, True):
            drawn = referrals_b_values.draw_values(random.Random(index), held_out=tier)
            assert not set(drawn.labels.values()) & held
    fresh = [referrals_b_values.draw_values(random.Random(i), True, True) for i in range(60)]
    assert any(set(d.labels.values()) & held for d in fresh)


def test_referrals_b_seen_set_is_the_first_held_out_split_unchanged() -> None:
    """The first held-out split, measured once, is drawn from the same random streams: these
    are what ``generate(i, 0, "held_out")`` drew at commit f34438a, before the split moved."""
    drawn = [generate(i, 0, "seen") for i in range(3)]
    assert [(r.meta["layout"], r.truth["participant_id"], r.truth["consent"]) for r in drawn] == [
        ("eform", "KX0707", False),
        ("banner", "SUB-0665-59", False),
        ("memo", "P095 007", True),
    ]
    assert drawn[0].meta["layout"] == SEEN[0] and drawn[1].truth["referral_date"] == "2025-04-23"


def test_referrals_b_differ_from_the_first_generators_conventions() -> None:
    """Page size and the wordings of the identifier's and the date's labels are not the first's."""
    first = referrals.generate(0, 1)
    second = generate(0, 1, "tuning")
    assert first.pages[0].size != second.pages[0].size
    for name in ("participant_id", "referral_date"):
        assert not set(referrals.POOLS.labels[name]) & set(referrals_b_values.POOLS.labels[name]), (
            name
        )
