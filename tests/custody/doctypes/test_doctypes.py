"""Configured document types: the shipped ``discharge``, and what a declaration may hold."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from pydantic import ValidationError

from custody.doctypes import TypeSpec, shipped_types


def test_doctypes_ship_discharge_as_configuration() -> None:
    """``discharge`` is a JSON file read by the tenant's own model: its five fields, typed."""
    discharge = shipped_types()["discharge"]
    kinds = {name: spec.type for name, spec in discharge.fields.items()}
    assert kinds == {
        "patient": "name",
        "admitted": "date",
        "discharged": "date",
        "allergies": "text",
        "clinician": "name",
    }
    assert {n for n, s in discharge.fields.items() if s.required} == {
        "patient",
        "admitted",
        "discharged",
    }
    raw = resources.files("custody.doctypes").joinpath("discharge.json").read_text()
    assert TypeSpec.model_validate(json.loads(raw)) == discharge


def test_doctypes_cue_words_default_to_the_labels() -> None:
    """Without cues a type is pointed at by its labels' words (three letters or more)."""
    spec = TypeSpec.model_validate({"fields": {"ref": {"labels": ["Incident No", "Ref"]}}})
    assert spec.cue_words() == {"incident", "ref"}


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"fields": {}}, "at least 1"),
        ({"fields": {"Bad Name": {"labels": ["X"]}}}, "field names must match"),
        ({"fields": {"ref": {"labels": []}}}, "at least 1"),
        ({"fields": {"ref": {"labels": ["::"]}}}, "a label is 1-80"),
        ({"fields": {"ref": {"labels": ["Ref"], "pattern": "(["}}}, "unterminated"),
        ({"fields": {"ref": {"labels": ["Ref"], "type": "colour"}}}, "literal_error|Input"),
        ({"fields": {"ref": {"labels": ["Ref"]}}, "extra": 1}, "Extra inputs"),
    ],
)
def test_doctypes_refuse_a_declaration_that_could_never_read(
    declared: dict[str, object], message: str
) -> None:
    """No fields, a bad name, no labels, a bad pattern or value type: refused when declared."""
    with pytest.raises(ValidationError, match=message):
        TypeSpec.model_validate(declared)
