"""Fields read from a document: the shared shapes extraction, rules, records and redaction use.

A field is found (a value in normal form, with the page and box it came from,
a confidence and how it was found), or it needs review (something was seen
but not surely enough: no value is given, never a guess), or it is missing.
Values are document content: they live in the sealed fields object and the
signed record, never in workflow history, logs, metrics or search attributes;
outside those, only field *names* and codes travel.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: Version of the field schemas below; bump when a type gains or changes a field.
#: 2 (#27): pairs carry their method; a classification's type may be a configured name.
_FIELDS_SCHEMA_VERSION = 2


class DocType(StrEnum):
    REFERRAL = "referral"
    RECEIPT = "receipt"
    FORM = "form"


#: The named fields of each type (``form`` has key-value pairs instead).
TYPE_FIELDS: dict[DocType, tuple[str, ...]] = {
    DocType.REFERRAL: (
        "referral_date",
        "participant_id",
        "consent",
        "referring_clinic",
        "clinician",
        "reason",
    ),
    DocType.RECEIPT: ("company", "date", "address", "total"),
    DocType.FORM: (),
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


FieldStatus = Literal["found", "review", "missing"]
FieldValueType = str | bool


class FoundField(_Model):
    """One field as read: ``value`` only when ``status`` is ``found``."""

    name: str
    status: FieldStatus
    #: Normal form: ISO date, identifier as printed (trimmed), consent true/false,
    #: totals as a decimal string ("12.50"), text fields as printed.
    value: FieldValueType | None = None
    page: int | None = None
    #: The value's box on the page, in the page's pixels: [x0, y0, x1, y1].
    box: list[int] | None = None
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    #: How it was found, e.g. "anchor:right-of", "anchor:below", "checkbox", "pattern".
    method: str = ""


class FormPair(_Model):
    """A question/answer link on a generic form (FUNSD's entity links)."""

    key: str
    value: str
    page: int
    key_box: list[int]
    value_box: list[int]
    confidence: float = Field(ge=0.0, le=1.0)
    #: How it was found: "beside", "label-column", "table", "checkbox" ("" before #27).
    method: str = ""


class Classification(_Model):
    #: A ``DocType`` value or a configured type's name (``custody.doctypes``); a plain
    #: string, so an extraction stored before configured types still reads the same.
    type: str
    #: "declared" by the submitter, "policy" (the tenant expects one type), or "classified".
    how: Literal["declared", "policy", "classified"]
    confidence: float = Field(ge=0.0, le=1.0)
    scores: dict[str, float] = Field(default_factory=dict)


class Extraction(_Model):
    """Everything read from one document's OCR words."""

    schema_version: int = _FIELDS_SCHEMA_VERSION
    classification: Classification
    fields: dict[str, FoundField] = Field(default_factory=dict)
    pairs: list[FormPair] = Field(default_factory=list)

    def value(self, name: str) -> FieldValueType | None:
        found = self.fields.get(name)
        return found.value if found is not None and found.status == "found" else None
