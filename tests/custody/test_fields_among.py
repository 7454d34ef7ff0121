"""fields_among: one model put together, by field name, from several that hold its fields."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from custody.models import (
    DocumentInput,
    OcrInput,
    StageResult,
    ValidateInput,
    ValidationResult,
    fields_among,
)

_DOC = DocumentInput(
    sha256="a" * 64,
    tenant="t1",
    source_id="src-1",
    intake_key="intake/a",
    size_bytes=10,
    submitted_at=datetime(2026, 1, 2, tzinfo=UTC),
)
_STAGED = StageResult(source_key="source/a", size_bytes=12, source_sig="sig-a")
_VALID = ValidationResult(media_type="application/pdf", pages=3, policy_version="p7")


def test_each_field_comes_from_the_one_source_that_holds_it() -> None:
    ocr = OcrInput(**fields_among(OcrInput, _DOC, _STAGED, _VALID))
    assert ocr == OcrInput(
        sha256="a" * 64,
        tenant="t1",
        source_key="source/a",
        media_type="application/pdf",
        pages=3,
        source_sig="sig-a",
    )


def test_a_field_two_sources_hold_must_be_given() -> None:
    """The document and the staged result both hold a size: the caller says which counts."""
    with pytest.raises(TypeError, match=r"ValidateInput\.size_bytes: held by 2"):
        fields_among(ValidateInput, _DOC, _STAGED)
    found = fields_among(ValidateInput, _DOC, _STAGED, size_bytes=_STAGED.size_bytes)
    assert ValidateInput(**found).size_bytes == 12


def test_given_values_win_and_a_field_none_holds_keeps_its_default() -> None:
    run = {"pages": 9, "unrelated": "not a field"}
    found = fields_among(OcrInput, _DOC, _STAGED, run, media_type="image/tiff")
    assert found["pages"] == 9 and found["media_type"] == "image/tiff"
    assert "unrelated" not in found
    found = fields_among(ValidateInput, _DOC, {"source_key": "k"}, size_bytes=1)
    assert "source_sig" not in found  # neither holds it: the model's default (None)
    assert ValidateInput(**found).source_sig is None
