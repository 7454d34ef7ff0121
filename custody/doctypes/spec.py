"""A configured document type: its fields, how each is labelled, what its value must look like.

A tenant declares a type as configuration, inside the fields policy it
already sets (``custody fields policy set --file``, key ``types``): per
field its label variants as people print them, its value type, an optional
pattern its whole value must match, and whether it is required. The generic
reader (``activities.fields.configured``) reads any such type; nothing in it
knows one type from another. Names are identifiers (:data:`TYPE_NAME`), so a
type's name may travel through workflow history where a built-in type's does.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: A document type's name: built in (``custody.fields.DocType``) or configured.
TYPE_NAME = r"^[a-z][a-z0-9_-]{0,39}$"
#: A field's name, as it appears in results and rules.
FIELD_NAME = r"^[a-z][a-z0-9_]{0,39}$"

#: What a value is read as: ``date`` an ISO date, ``identifier`` as printed without
#: the punctuation around it, ``name`` a person's or a place's name (letters), ``text``
#: as printed, ``number`` a decimal, ``checkbox`` true when its box is ticked.
ValueType = Literal["date", "identifier", "name", "text", "number", "checkbox"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldSpec(_Model):
    """One field of a configured type."""

    #: How the label is printed, each variant a few words ("Discharged", "Date of discharge").
    labels: tuple[str, ...] = Field(min_length=1)
    type: ValueType = "text"
    #: A regular expression the whole value must match (checked as a rule: FIELD_INVALID).
    pattern: str | None = None
    required: bool = False

    @field_validator("labels")
    @classmethod
    def _worded(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for label in value:
            if not any(c.isalnum() for c in label) or len(label) > 80:
                raise ValueError("a label is 1-80 characters with a letter or a digit")
        return value

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)  # a bad pattern fails when the policy is set, not at check
            except re.error as err:
                raise ValueError(f"pattern does not compile: {err}") from None
        return value


class TypeSpec(_Model):
    """A configured document type: its fields by name, and the words that say a page is one."""

    fields: dict[str, FieldSpec] = Field(min_length=1)
    #: Words whose presence says a page is of this type (classification); none: the
    #: words of its labels.
    cues: tuple[str, ...] = ()

    @field_validator("fields")
    @classmethod
    def _named(cls, value: dict[str, FieldSpec]) -> dict[str, FieldSpec]:
        bad = sorted(n for n in value if re.fullmatch(FIELD_NAME, n) is None)
        if bad:
            raise ValueError(f"field names must match {FIELD_NAME}: {', '.join(bad)}")
        return value

    def cue_words(self) -> frozenset[str]:
        """Lower-case words that point at this type."""
        source = self.cues or tuple(label for spec in self.fields.values() for label in spec.labels)
        return frozenset(w for text in source for w in re.findall(r"[a-z]{3,}", text.lower()))
