"""Application rules on the fields read: a tenant's fields policy and its verdict.

The fields policy says which document types a tenant expects, the languages
its pages may be in, and per type which fields are required and what form
they must take (a valid date not in the future; an identifier pattern). It
also declares the tenant's own document types (``types``, a
``custody.doctypes.TypeSpec`` each: fields, labels, value types, patterns,
required), beside the built-in ones and those Custody ships (``discharge``);
a configured type's own ``required``, ``date`` and ``pattern`` are its rules,
and ``rules`` may say more of it (what to do on a miss). A
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
from custody.doctypes import TYPE_NAME, TypeSpec, shipped_types
from custody.errors import Code, UsageError
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
            try:
                re.compile(pattern)  # a bad pattern fails when the policy is set, not at check
            except re.error as err:  # not a ValueError: the CLI would print a traceback
                raise ValueError(f"pattern does not compile: {err}") from None
        return value


class FieldsPolicy(_Model):
    #: Names of built-in or configured types (a type's name, as ``DocType`` values are).
    expected_types: tuple[str, ...] = ()
    #: ISO 639-1 codes a page may be in (activities.rules.language); empty: no check.
    languages: tuple[str, ...] = ()
    on_language: Action = "quarantine"
    rules: dict[str, TypeRules] = Field(default_factory=dict)
    #: The tenant's own document types, by name (beside the shipped ones).
    types: dict[str, TypeSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_names(self) -> FieldsPolicy:
        builtin = sorted(set(self.types) & {t.value for t in DocType})
        if builtin:
            raise ValueError(
                f"{', '.join(builtin)} is built in; a configured type needs its own name"
            )
        bad = sorted(n for n in self.types if re.fullmatch(TYPE_NAME, n) is None)
        if bad:
            raise ValueError(f"type names must match {TYPE_NAME}: {', '.join(bad)}")
        unknown = sorted(set(self.expected_types) - set(type_fields(self)))
        if unknown:
            raise ValueError(f"no document type {', '.join(unknown)}")
        return self

    @model_validator(mode="after")
    def _known_fields(self) -> FieldsPolicy:
        # A rule on a field the type never has would hold every document back.
        fields = type_fields(self)
        for kind, rules in self.rules.items():
            if kind not in fields:
                raise ValueError(f"no document type {kind}")
            named = {*rules.required, *rules.dates, *rules.patterns}
            unknown = sorted(named - set(fields[kind]))
            if unknown:
                raise ValueError(f"{kind} has no field {', '.join(unknown)}")
        return self


def configured_types(policy: FieldsPolicy) -> dict[str, TypeSpec]:
    """The configured types a tenant's documents may be: shipped ones, then its own."""
    return {**shipped_types(), **policy.types}


def type_fields(policy: FieldsPolicy) -> dict[str, tuple[str, ...]]:
    """Every type the policy knows, built in or configured, with its field names."""
    known = {kind.value: names for kind, names in TYPE_FIELDS.items()}
    return known | {name: tuple(spec.fields) for name, spec in configured_types(policy).items()}


def known_type(policy: FieldsPolicy, name: str) -> str:
    """``name`` when the policy knows that type; else ``UNKNOWN_TYPE`` (a caller's mistake)."""
    if name not in type_fields(policy):
        known = ", ".join(sorted(type_fields(policy)))
        raise UsageError(Code.UNKNOWN_TYPE, f"no document type {name[:40]!r}; known: {known}")
    return name


def type_rules(policy: FieldsPolicy, kind: str) -> TypeRules | None:
    """The rules on one type: the policy's, plus a configured type's own."""
    rules = policy.rules.get(kind)
    spec = configured_types(policy).get(kind)
    if spec is None:
        return rules
    base = rules or TypeRules()
    own = spec.fields.items()
    return base.model_copy(
        update={
            "required": tuple(dict.fromkeys([*base.required, *(n for n, f in own if f.required)])),
            "dates": tuple(dict.fromkeys([*base.dates, *(n for n, f in own if f.type == "date")])),
            "patterns": {**{n: f.pattern for n, f in own if f.pattern}, **base.patterns},
        }
    )


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
    rules = type_rules(policy, extraction.classification.type)
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
