"""Records signed before searchable output still verify: new fields stay out until set."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from custody.canonical import canonical_json
from custody.ledger.signing import Signature, rotate, verify
from custody.models import ResultRecord, SignedRecord


def _record() -> ResultRecord:
    return ResultRecord(
        sha256="a" * 64,
        tenant="t",
        source_id=None,
        source_key=f"sources/t/{'a' * 64}",
        size_bytes=10,
        media_type="image/tiff",
        policy_version="limits-v1-000000000000",
        pages=1,
        page_confidences=[0.9],
        mean_confidence=0.9,
        confidence_band="high",
        text_key="results/t/x/text.txt",
        pages_key="results/t/x/pages.json",
        text_sha256="b" * 64,
        pages_sha256="c" * 64,
        chars=3,
        engine="easyocr",
        engine_version="1",
        ocr_params={},
        model_hashes={},
        ocr_seconds=1.0,
        transitions=[],
        attempts={"ocr": 1},
        workflow_id="doc-t-x",
        run_id="r",
        published_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_record_signed_before_searchable_fields_still_verifies(tmp_path: Path) -> None:
    """A version-2 record (no searchable fields) serialises to the very bytes it was signed over."""
    body = json.loads(canonical_json(_record()))
    body["schema_version"] = 2
    for added in ("text_layer_pages", "text_layer_sha256", "searchable", "pdf_key", "pdf_sha256"):
        assert added not in body  # as stored by a release without them
    signer = rotate(tmp_path / "keys")
    sig = signer.sign(canonical_json(body))
    stored = canonical_json({"record": body, "signature": sig.model_dump()})
    signed = SignedRecord.model_validate_json(stored)
    assert signed.record.searchable == "none" and signed.record.pdf_key is None
    keys = {signer.kid: signer.public_record()}
    assert verify(canonical_json(signed.record), Signature(**sig.model_dump()), keys) is None


def test_record_with_searchable_pdf_signs_its_fields() -> None:
    """Once set, the new fields are in the signed bytes: changing one breaks the signature."""
    record = _record().model_copy(
        update={"searchable": "built", "pdf_key": "results/t/x/s.pdf", "pdf_sha256": "d" * 64}
    )
    body = json.loads(canonical_json(record))
    assert body["pdf_sha256"] == "d" * 64 and body["searchable"] == "built"
    again = ResultRecord.model_validate(body)
    assert canonical_json(again) == canonical_json(record)
    tampered = again.model_copy(update={"pdf_sha256": "e" * 64})
    assert canonical_json(tampered) != canonical_json(record)
