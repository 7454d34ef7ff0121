"""Application rules: required fields and formats judged by the tenant's policy, names only."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from custody.errors import Code
from custody.fields import Classification, DocType, Extraction, FoundField
from custody.state.rules import (
    DEFAULT_POLICY,
    FieldsPolicy,
    TypeRules,
    evaluate,
    get_policy,
    set_policy,
)
from custody.stores.local import LocalStore

TODAY = date(2026, 11, 30)


def _referral(**values: str | bool | None) -> Extraction:
    fields = {
        name: FoundField(name=name, status="found", value=value, confidence=0.99)
        if value is not None
        else FoundField(name=name, status="review")
        for name, value in values.items()
    }
    kind = Classification(type=DocType.REFERRAL, how="classified", confidence=0.9)
    return Extraction(classification=kind, fields=fields)


def _policy(**rules: object) -> FieldsPolicy:
    return FieldsPolicy(rules={DocType.REFERRAL: TypeRules.model_validate(rules)})


def test_rules_missing_required_field_reviews_with_names_only() -> None:
    """A required field not read sends the document to review, naming the field, no value."""
    read = _referral(referral_date="2026-03-14")
    verdict = evaluate(read, _policy(required=["referral_date", "participant_id"]), TODAY)
    assert verdict.code is None
    assert verdict.review == ["participant_id"]
    assert "2026-03-14" not in verdict.model_dump_json()


def test_rules_unsure_field_counts_as_missing() -> None:
    """A field read unsurely (status review) is no value: the required rule sees it missing."""
    read = _referral(participant_id=None)
    policy = _policy(required=["participant_id"], on_missing="quarantine")
    assert evaluate(read, policy, TODAY).code is Code.FIELDS_MISSING


def test_rules_future_date_and_bad_identifier_are_invalid() -> None:
    """A date after today and an identifier off its pattern quarantine as FIELD_INVALID."""
    read = _referral(referral_date="2027-01-02", participant_id="X-1")
    policy = _policy(dates=["referral_date"], patterns={"participant_id": r"P-\d{5}"})
    verdict = evaluate(read, policy, TODAY)
    assert verdict.invalid == ("participant_id", "referral_date")
    assert verdict.code is Code.FIELD_INVALID


def test_rules_valid_fields_pass_and_other_types_have_no_rules() -> None:
    """Fields that keep every rule pass; a type without rules is never judged."""
    read = _referral(referral_date="2026-03-14", participant_id="P-00421")
    policy = _policy(
        required=["referral_date", "participant_id"],
        dates=["referral_date"],
        patterns={"participant_id": r"P-\d{5}"},
    )
    assert evaluate(read, policy, TODAY).review == []
    receipt = read.model_copy(
        update={
            "classification": Classification(type=DocType.RECEIPT, how="declared", confidence=1)
        }
    )
    assert evaluate(receipt, policy, TODAY).review == []


def test_rules_policy_is_kept_as_signed_versions_per_tenant(tmp_path: Path) -> None:
    """The newest policy of a tenant is read back; another tenant still has the default."""
    store = LocalStore(tmp_path / "objects")
    policy = FieldsPolicy(expected_types=(DocType.REFERRAL,), languages=("en",))
    set_policy(store, "clinic-a", policy)
    assert get_policy(store, "clinic-a") == policy
    assert get_policy(store, "clinic-b") == DEFAULT_POLICY
    assert any(store.list("policies/fields/clinic-a/"))


def test_rules_policy_refuses_a_rule_on_a_field_the_type_lacks() -> None:
    """A required field a type never has is refused when the policy is made, not at check."""
    with pytest.raises(ValidationError, match="referral has no field total"):
        _policy(required=["total"])
