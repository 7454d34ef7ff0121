"""The third referral generator: its truth complete, its conventions its own (that it is
deterministic: test_referrals.py, with the others)."""

from __future__ import annotations

import json
import random
from datetime import date
from pathlib import Path

from starter.bench import referrals, referrals_b_values, referrals_c_values
from starter.bench.fields_score import truth_for
from starter.bench.redaction import documents as redaction_documents
from starter.bench.redaction import with_identifiers
from starter.bench.referrals_c import FAMILIES, SPLIT, identifiers_for, write_set
from tests.starter.bench.blind import assert_own_wordings

#: Exactly the referral fields the other generators' truth carries.
_FIELDS = {"referral_date", "participant_id", "consent", "referring_clinic", "clinician", "reason"}
_PATIENT = {"patient_name", "date_of_birth", "phone", "address"}


def test_referrals_c_write_truth_every_family_and_both_consents(tmp_path: Path) -> None:
    """Each file has its ``.fields.json`` with the six fields (ISO date, boolean consent) in
    split held_out_c, and its patient identifiers apart; all families and both consents occur."""
    families, consents = set(), set()
    paths = write_set(tmp_path, 12, seed=5)
    for path in paths:
        record = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())
        assert record["type"] == "referral" and record["drawn"]["split"] == SPLIT
        assert set(record["fields"]) == _FIELDS
        date.fromisoformat(record["fields"]["referral_date"])
        assert isinstance(record["fields"]["consent"], bool)
        assert set(identifiers_for(path)) == _PATIENT
        families.add(record["drawn"]["layout"])
        consents.add(record["fields"]["consent"])
    assert families == set(FAMILIES) and consents == {True, False}
    assert {p.suffix for p in paths} == {".png", ".pdf"}  # the fax is two pages
    truth = truth_for(paths[0])
    assert truth is not None and truth.split == SPLIT and not set(truth.fields) & _PATIENT


def test_referrals_c_identifiers_reach_only_the_redaction_truth(tmp_path: Path) -> None:
    """The redaction bench's set adds the patient's printed identifiers to the truth."""
    docs = with_identifiers(redaction_documents(write_set(tmp_path, 2, seed=1)))
    assert len(docs) == 2 and all(set(t.fields) == _PATIENT | _FIELDS for _, t in docs)


def test_referrals_c_consent_given_about_as_often_as_refused() -> None:
    """Over 120 referrals neither answer is rare."""
    drawn = [referrals_c_values.draw_values(random.Random(i)) for i in range(120)]
    share = sum(d.consent for d in drawn) / len(drawn)
    assert 0.35 <= share <= 0.65


def test_referrals_c_wordings_and_sites_are_not_the_other_generators() -> None:
    """No label wording, clinic or reason is shared with the first two generators."""
    assert_own_wordings(referrals_c_values, (referrals, referrals_b_values))
