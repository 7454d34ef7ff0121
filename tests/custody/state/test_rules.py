"""Application rules: required fields and formats judged by the tenant's policy, names only."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from custody.errors import Code, UsageError
from custody.fields import Classification, DocType, Extraction, FoundField
from custody.state.rules import (
    DEFAULT_POLICY,
    FieldsPolicy,
    TypeRules,
    configured_types,
    evaluate,
    get_policy,
    known_type,
    set_policy,
    type_fields,
    type_rules,
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


INCIDENT = {
    "cues": ["incident"],
    "fields": {
        "reference": {"labels": ["Incident No"], "type": "identifier", "pattern": r"INC-\d{4}"},
        "occurred": {"labels": ["Date of incident"], "type": "date", "required": True},
    },
}


def _typed(kind: str, **values: str | None) -> Extraction:
    return _referral(**values).model_copy(
        update={"classification": Classification(type=kind, how="declared", confidence=1)}
    )


def test_rules_policy_declares_a_type_by_configuration() -> None:
    """A tenant's type is known beside the built-in and shipped ones, and may be expected."""
    policy = FieldsPolicy.model_validate(
        {"expected_types": ["incident"], "types": {"incident": INCIDENT}}
    )
    assert set(type_fields(policy)) == {"referral", "receipt", "form", "discharge", "incident"}
    assert configured_types(policy)["incident"].fields["occurred"].required
    assert known_type(policy, "discharge") == "discharge"
    with pytest.raises(UsageError) as unknown:
        known_type(policy, "invoice")
    assert unknown.value.code is Code.UNKNOWN_TYPE


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"types": {"referral": INCIDENT}}, "referral is built in"),
        ({"types": {"Incident!": INCIDENT}}, "type names must match"),
        ({"expected_types": ["invoice"]}, "no document type invoice"),
        ({"rules": {"invoice": {}}}, "no document type invoice"),
        ({"rules": {"discharge": {"required": ["total"]}}}, "discharge has no field total"),
        ({"rules": {"referral": {"patterns": {"participant_id": "(["}}}}, "does not compile"),
    ],
)
def test_rules_policy_refuses_types_it_cannot_judge(
    declared: dict[str, object], message: str
) -> None:
    """A built-in name reused, a bad name, an unknown type or field, a bad pattern: refused."""
    with pytest.raises(ValidationError, match=message):
        FieldsPolicy.model_validate(declared)


def test_rules_configured_type_judges_by_its_own_declaration() -> None:
    """Its required fields and patterns are its rules; the policy's rules add what to do."""
    policy = FieldsPolicy.model_validate(
        {"types": {"incident": INCIDENT}, "rules": {"incident": {"on_missing": "quarantine"}}}
    )
    assert (
        evaluate(
            _typed("incident", reference="INC-0042", occurred="2026-03-01"), policy, TODAY
        ).review
        == []
    )
    missing = evaluate(_typed("incident", reference="INC-0042"), policy, TODAY)
    assert missing.missing == ("occurred",) and missing.code is Code.FIELDS_MISSING
    wrong = evaluate(_typed("incident", reference="42", occurred="2027-01-01"), policy, TODAY)
    assert wrong.invalid == ("occurred", "reference") and wrong.code is Code.FIELD_INVALID


def test_rules_shipped_discharge_reviews_a_missing_date_for_every_tenant() -> None:
    """No policy set: a discharge summary without its discharge date goes to review, named."""
    read = _typed("discharge", patient="A. Patient", admitted="2026-03-01")
    verdict = evaluate(read, DEFAULT_POLICY, TODAY)
    assert verdict.review == ["discharged"] and verdict.code is None


def test_rules_policy_stored_before_configured_types_still_reads() -> None:
    """A policy's JSON as #15 stored it (no types, enum values as strings) decodes the same."""
    old = (
        '{"expected_types":["referral"],"languages":[],"on_language":"quarantine",'
        '"rules":{"referral":{"required":["consent"],"dates":[],"patterns":{},'
        '"on_missing":"review","on_invalid":"quarantine"}}}'
    )
    policy = FieldsPolicy.model_validate_json(old)
    assert policy.expected_types == ("referral",) and policy.types == {}
    assert type_rules(policy, "referral") == TypeRules(required=("consent",))
