"""The policy's two-person rule and purpose: new fields that leave stored policies' hashes alone."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from custody import egress as eg
from custody.release_approval import flagged, needs_approval

#: Hashes of policies as the code before these fields pinned them (main, 2026-12-01).
_BEFORE = {
    "default": "7f8a7b171943e3885515b15584cd77f58ce6b9108b6ac9879ffb9584412d76cb",
    "consent-redacted": "f5b0efda80584919c9824634b11699fc3a3d4d46c9bd8da6898fa291998d4ded",
}


def test_policy_hash_unchanged_by_fields_left_at_their_defaults() -> None:
    """A policy that names neither two_person nor purpose keeps the hash it was pinned by."""
    assert eg.DEFAULT_POLICY.sha256() == _BEFORE["default"]
    older = eg.Policy(name="p", require_consent=True, view="redacted")
    assert older.sha256() == _BEFORE["consent-redacted"]
    assert b"two_person" not in older.canonical() and b"purpose" not in older.canonical()


def test_policy_two_person_and_purpose_are_hashed_when_set() -> None:
    """Setting either changes the canonical form, so a release pins exactly that rule."""
    held = eg.Policy(name="default", two_person="always", purpose="treatment")
    assert held.sha256() != eg.DEFAULT_POLICY.sha256()
    assert eg.Policy.model_validate_json(held.canonical()) == held


@pytest.mark.parametrize("purpose", ["", "   ", "line\nbreak", "x" * 201])
def test_policy_purpose_must_be_one_printable_line(purpose: str) -> None:
    with pytest.raises(ValidationError):
        eg.Policy(name="p", purpose=purpose)


def test_needs_approval_follows_the_rule_and_the_flags() -> None:
    """none: never; always: always; flagged: only when a rule flagged a document."""
    rules = {rule: eg.Policy(name="p", two_person=rule) for rule in ("none", "always", "flagged")}
    got = {(r, f): needs_approval(p, f) for r, p in rules.items() for f in (False, True)}
    assert got == {
        ("none", False): False,
        ("none", True): False,
        ("always", False): True,
        ("always", True): True,
        ("flagged", False): False,
        ("flagged", True): True,
    }
    assert flagged(["participant_id"], "high") and flagged([], "review")
    assert not flagged([], "high")
