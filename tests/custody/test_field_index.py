"""The field index: keyed hashes per (tenant, field, value), found again without plaintext."""

from __future__ import annotations

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
