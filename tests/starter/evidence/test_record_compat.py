"""Records signed before searchable output still verify: new fields stay out until set."""

from __future__ import annotations

import json
from pathlib import Path

from custody.canonical import canonical_json
from custody.ledger.signing import Signature, rotate, verify
from custody.models import ResultRecord, SignedRecord
from tests.records import result_record


def test_record_signed_before_searchable_fields_still_verifies(tmp_path: Path) -> None:
    """A version-2 record (no searchable fields) serialises to the very bytes it was signed over."""
    body = json.loads(canonical_json(result_record()))
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
    record = result_record().model_copy(
        update={"searchable": "built", "pdf_key": "results/t/x/s.pdf", "pdf_sha256": "d" * 64}
    )
    body = json.loads(canonical_json(record))
    assert body["pdf_sha256"] == "d" * 64 and body["searchable"] == "built"
    again = ResultRecord.model_validate(body)
    assert canonical_json(again) == canonical_json(record)
    tampered = again.model_copy(update={"pdf_sha256": "e" * 64})
    assert canonical_json(tampered) != canonical_json(record)
