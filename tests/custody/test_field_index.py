"""The field index: keyed hashes per (tenant, field, value), found again without plaintext."""

from __future__ import annotations

import hashlib
from pathlib import Path

from custody import field_index
from custody.fields import Classification, DocType, Extraction, FoundField
from custody.keys.keyring import init_keyring
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore

SHA = "ab" * 32


def _read(participant_id: str) -> Extraction:
    found = FoundField(name="participant_id", status="found", value=participant_id, confidence=1)
    unsure = FoundField(name="referral_date", status="review")
    kind = Classification(type=DocType.REFERRAL, how="classified", confidence=0.9)
    return Extraction(
        classification=kind, fields={"participant_id": found, "referral_date": unsure}
    )


def _sealed(tmp_path: Path) -> SealedStore:
    return SealedStore(
        LocalStore(tmp_path / "objects"), init_keyring(tmp_path / "keys", development=True)
    )


def test_field_index_finds_value_ignoring_case_and_spaces(tmp_path: Path) -> None:
    """A query in another case and spacing (`` p-00421 ``, ``P - 00421``) finds ``P-00421``."""
    store = _sealed(tmp_path)
    assert field_index.write(store, "clinic-a", SHA, _read("P-00421")) == 1
    assert field_index.find(store, "clinic-a", "participant_id", " p-00421 ") == [SHA]
    assert field_index.find(store, "clinic-a", "participant_id", "P - 00421") == [SHA]


def test_field_index_holds_no_plaintext_and_keeps_tenants_apart(tmp_path: Path) -> None:
    """Index keys carry no value; another tenant, field or value finds nothing."""
    store = _sealed(tmp_path)
    field_index.write(store, "clinic-a", SHA, _read("P-00421"))
    keys = list(store.list("field-index/"))
    assert len(keys) == 1 and "00421" not in keys[0]
    assert field_index.find(store, "clinic-b", "participant_id", "P-00421") == []
    assert field_index.find(store, "clinic-a", "mrn", "P-00421") == []
    assert field_index.find(store, "clinic-a", "participant_id", "P-00422") == []


def test_field_index_absent_without_keyring(tmp_path: Path) -> None:
    """Without keys there is no index: nothing written, nothing found."""
    store = LocalStore(tmp_path / "objects")
    assert field_index.write(store, None, SHA, _read("P-00421")) == 0
    assert field_index.find(store, None, "participant_id", "P-00421") == []


def test_field_index_verification_names_a_missing_or_altered_entry(tmp_path: Path) -> None:
    """``custody verify``'s ``fields.index``: each surely read field's entry present and as
    written; deleting or flipping one byte of it (blinding a search) FAILs, by field name."""
    from custody.models import ResultRecord
    from starter.evidence.verify.objects import field_index_check

    store = _sealed(tmp_path)
    fields = _read("P-00421").model_dump_json().encode()
    store.create("results/clinic-a/fields.json", fields)
    record = ResultRecord.model_construct(
        sha256=SHA,
        tenant="clinic-a",
        fields_key="results/clinic-a/fields.json",
        fields_sha256=hashlib.sha256(fields).hexdigest(),
    )
    before = field_index_check(store, record)
    assert before is not None and before.detail == "participant_id missing"  # not yet indexed
    field_index.write(store, "clinic-a", SHA, _read("P-00421"))
    intact = field_index_check(store, record)
    assert intact is not None and intact.ok and intact.detail == "1 entries"
    (entry,) = (tmp_path / "objects" / "field-index" / "clinic-a").rglob(SHA)
    entry.write_bytes(entry.read_bytes()[:-1] + bytes([entry.read_bytes()[-1] ^ 1]))
    altered = field_index_check(store, record)
    assert altered is not None and not altered.ok and altered.detail == "participant_id altered"
    entry.unlink()
    missing = field_index_check(store, record)
    assert missing is not None and missing.detail == "participant_id missing"
    plain = ResultRecord.model_construct(sha256=SHA, tenant="clinic-a", fields_key=None)
    assert field_index_check(store, plain) is None
