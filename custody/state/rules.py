"""Application rules on the fields read: a tenant's fields policy and its verdict.

The fields policy says which document types a tenant expects, the languages
its pages may be in, and per type which fields are required and what form
they must take (a valid date not in the future; an identifier pattern). A
field that breaks a rule sends the document to the ``review`` band or to
quarantine (``FIELDS_MISSING``, ``FIELD_INVALID``), as the policy says. The
verdict names fields, never their values: it travels through workflow history.

A field read unsurely (status ``review``) counts as missing: unsure is not a
value. The policy is security-relevant state, kept as signed versions
(``custody.state.versions``) under ``policies/fields/<tenant or _>/``; a tenant
without one gets :data:`DEFAULT_POLICY` (classify among every type, no rules,
no language check).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from custody import ids
from custody.errors import Code
from custody.fields import TYPE_FIELDS, DocType, Extraction
from custody.state import versions
from custody.stores import ObjectStore

Action = Literal["review", "quarantine"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TypeRules(_Model):
    """The rules for one document type."""

    required: tuple[str, ...] = ()
    #: Date fields that must be a valid ISO date, not after the day of the check.
    dates: tuple[str, ...] = ()
    #: Field -> a regular expression its whole value must match (identifiers).
    patterns: dict[str, str] = Field(default_factory=dict)
    on_missing: Action = "review"
    on_invalid: Action = "quarantine"

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: dict[str, str]) -> dict[str, str]:
        for pattern in value.values():
            re.compile(pattern)  # a bad pattern fails when the policy is set, not at check
        return value


class FieldsPolicy(_Model):
    expected_types: tuple[DocType, ...] = ()
    #: ISO 639-1 codes a page may be in (activities.rules.language); empty: no check.
    languages: tuple[str, ...] = ()
    on_language: Action = "quarantine"
    rules: dict[DocType, TypeRules] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_fields(self) -> FieldsPolicy:
        # A rule on a field the type never has would hold every document back.
        for kind, rules in self.rules.items():
            named = {*rules.required, *rules.dates, *rules.patterns}
            unknown = sorted(named - set(TYPE_FIELDS[kind]))
            if unknown:
                raise ValueError(f"{kind.value} has no field {', '.join(unknown)}")
        return self


DEFAULT_POLICY = FieldsPolicy()


class Verdict(_Model):
    """What the rules say of one document: names and a code, never values."""

    missing: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    #: The quarantine code, when the policy quarantines what was found.
    code: Code | None = None

    @property
    def review(self) -> list[str]:
        return sorted({*self.missing, *self.invalid})


def _prefix(tenant: str | None) -> str:
    return f"policies/fields/{ids.scope(ids.check_tenant(tenant))}/"


def set_policy(store: ObjectStore, tenant: str | None, policy: FieldsPolicy) -> int:
    """Store ``policy`` as the tenant's newest version; returns its number."""
    return versions.append(store, _prefix(tenant), policy.model_dump_json().encode())


def get_policy(store: ObjectStore, tenant: str | None) -> FieldsPolicy:
    raw = versions.latest(store, _prefix(tenant))
    return DEFAULT_POLICY if raw is None else FieldsPolicy.model_validate_json(raw)


def evaluate(extraction: Extraction, policy: FieldsPolicy, today: date) -> Verdict:
    rules = policy.rules.get(extraction.classification.type)
    if rules is None:
        return Verdict()
    missing = tuple(n for n in rules.required if extraction.value(n) is None)
    invalid = tuple(
        sorted(
            {n for n in rules.dates if not _date_ok(extraction.value(n), today)}
            | {n for n, p in rules.patterns.items() if not _matches(extraction.value(n), p)}
        )
    )
    code = None
    if invalid and rules.on_invalid == "quarantine":
        code = Code.FIELD_INVALID
    elif missing and rules.on_missing == "quarantine":
        code = Code.FIELDS_MISSING
    return Verdict(missing=missing, invalid=invalid, code=code)


def _date_ok(value: object, today: date) -> bool:
    if value is None:
        return True  # absent is the required rule's business, not the format's
    try:
        return date.fromisoformat(str(value)) <= today
    except ValueError:
        return False


def _matches(value: object, pattern: str) -> bool:
    return value is None or re.fullmatch(pattern, str(value)) is not None
