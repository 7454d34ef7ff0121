"""``SealedStore`` honours the store contract, and adds envelope encryption on top.

The contract tests of tests/custody/stores/test_store_contract.py run here again with
``store`` a SealedStore over a LocalStore; the rest pin down what sealing adds.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from custody.errors import ConfigurationError
from custody.keys import keyring as keys
from custody.keys.keyring import Keyring, TenantShredded
from custody.stores.base import ObjectStore
from custody.stores.local import LocalStore
from custody.stores.sealed import OVERHEAD, SealedStore, SealInvalid
from tests.custody.stores.test_store_contract import (  # noqa: F401  (collected again here)
    test_create_first_writer_wins,
    test_create_from_file_streams_and_round_trips,
    test_create_race_threads_one_winner,
    test_delete_is_idempotent,
    test_invalid_key_raises_value_error,
    test_list_yields_prefix_keys_in_order,
    test_missing_key_raises_object_missing,
    test_put_overwrites,
)

SECRET = b"Patient: Jane Q. Example, DOB 1970-01-01"


@pytest.fixture
def keyring(tmp_path: Path) -> Keyring:
    return keys.init_keyring(tmp_path / "keys", development=True)


@pytest.fixture
def store(tmp_path: Path, keyring: Keyring) -> ObjectStore:
    """Overrides the contract module's ``store``: the sealed store over a directory."""
    return SealedStore(LocalStore(tmp_path / "objects"), keyring)


def _raw(tmp_path: Path, key: str) -> bytes:
    return (tmp_path / "objects" / key).read_bytes()


def test_sealed_store_raw_bytes_hold_no_plaintext(store: ObjectStore, tmp_path: Path) -> None:
    """What lands on disk is ciphertext; the size reported is the plaintext's."""
    store.create("results/clinic-a/doc", SECRET)
    store.create_from_file("sources/clinic-a/doc", io.BytesIO(SECRET * 3))
    for key in ("results/clinic-a/doc", "sources/clinic-a/doc"):
        assert b"Jane" not in _raw(tmp_path, key)
    assert store.size("results/clinic-a/doc") == len(SECRET)
    assert len(_raw(tmp_path, "results/clinic-a/doc")) == len(SECRET) + OVERHEAD


def test_sealed_store_object_moved_to_another_key_does_not_open(
    store: ObjectStore, tmp_path: Path
) -> None:
    """Ciphertext copied under another tenant's key fails authentication."""
    store.create("results/clinic-a/doc", SECRET)
    store.create("results/clinic-b/doc", b"other")
    (tmp_path / "objects/results/clinic-b/doc").write_bytes(_raw(tmp_path, "results/clinic-a/doc"))
    with pytest.raises(SealInvalid):
        store.get("results/clinic-b/doc")


def test_sealed_store_refuses_tampered_and_plain_objects(
    store: ObjectStore, tmp_path: Path
) -> None:
    """A flipped bit or an object written around the seal raises SEAL_INVALID."""
    store.create("results/_/doc", SECRET)
    blob = bytearray(_raw(tmp_path, "results/_/doc"))
    blob[-1] ^= 1
    (tmp_path / "objects/results/_/doc").write_bytes(bytes(blob))
    LocalStore(tmp_path / "objects").create("results/_/plain", SECRET)
    for key in ("results/_/doc", "results/_/plain"):
        with pytest.raises(SealInvalid, match="SEAL_INVALID"):
            store.get(key)


def test_sealed_store_shred_makes_only_that_tenant_unreadable(
    store: ObjectStore, keyring: Keyring
) -> None:
    """After shredding clinic-a its objects raise TENANT_SHREDDED; clinic-b and _ still read."""
    for scope in ("clinic-a", "clinic-b", "_"):
        store.create(f"records/{scope}/doc", SECRET + scope.encode())
    assert keyring.directory is not None
    keys.shred(keyring.directory, "clinic-a")
    with pytest.raises(TenantShredded, match="TENANT_SHREDDED"):
        store.get("records/clinic-a/doc")
    with pytest.raises(TenantShredded):
        store.create("records/clinic-a/new", b"x")
    assert store.get("records/clinic-b/doc") == SECRET + b"clinic-b"
    assert store.get("records/_/doc") == SECRET + b"_"
    assert not (keyring.directory / "kek-clinic-a.key").exists()


def test_keyring_files_are_private(keyring: Keyring) -> None:
    """The key folder is 0700 and every key file 0600."""
    assert keyring.directory is not None
    assert keyring.directory.stat().st_mode & 0o777 == 0o700
    files = list(keyring.directory.iterdir())
    assert files and all(f.stat().st_mode & 0o777 == 0o600 for f in files)


def test_keyring_json_secret_has_no_lazy_tenant_keys(tmp_path: Path) -> None:
    """Keys from CUSTODY_KEYS_JSON seal for listed tenants and refuse unlisted ones."""
    import base64
    import json

    from custody.errors import ConfigurationError
    from custody.settings import Settings

    b64 = base64.b64encode(os.urandom(32)).decode()
    blob = json.dumps({"payload": {"k1": b64}, "kek": {"_": b64}})
    ring = keys.load_keyring(Settings(home=tmp_path, keys_json=blob))  # type: ignore[arg-type]
    assert ring is not None and ring.current()[0] == "k1"
    sealed = SealedStore(LocalStore(tmp_path / "objects"), ring)
    sealed.put("records/_/x", SECRET)
    assert sealed.get("records/_/x") == SECRET
    with pytest.raises(ConfigurationError):
        sealed.put("records/clinic-z/x", SECRET)


def test_sealed_store_kek_rotation_wraps_new_objects_and_opens_old(
    store: ObjectStore, keyring: Keyring, tmp_path: Path
) -> None:
    """After ``rotate_kek(clinic-a)`` new objects name version 1 and open only with it;
    objects written before still open with version 0; clinic-b is untouched."""
    store.create("records/clinic-a/old", b"before")
    store.create("records/clinic-b/doc", b"b")
    assert keyring.directory is not None
    assert keys.rotate_kek(keyring.directory, "clinic-a") == 1
    store.create("records/clinic-a/new", b"after")
    assert _raw(tmp_path, "records/clinic-a/old").startswith(b"CSTDY\x01")
    assert _raw(tmp_path, "records/clinic-a/new").startswith(b"CSTK\x00\x01")
    assert _raw(tmp_path, "records/clinic-b/doc").startswith(b"CSTDY\x01")
    assert store.get("records/clinic-a/old") == b"before"
    assert store.get("records/clinic-a/new") == b"after"
    assert store.size("records/clinic-a/new") == len(b"after")
    assert keyring.kek_versions("clinic-a") == [0, 1] and keyring.kek_versions("clinic-b") == [0]
    # The new object is wrapped by version 1 alone: without that key it does not open.
    (keyring.directory / "kek-clinic-a.1.key").rename(tmp_path / "set-aside.key")
    with pytest.raises(ConfigurationError):
        store.get("records/clinic-a/new")
    assert store.get("records/clinic-a/old") == b"before"
    # A header edited to claim another version fails authentication.
    (tmp_path / "set-aside.key").rename(keyring.directory / "kek-clinic-a.1.key")
    blob = bytearray(_raw(tmp_path, "records/clinic-a/old"))
    blob[:6] = b"CSTK\x00\x01"
    (tmp_path / "objects/records/clinic-a/old").write_bytes(bytes(blob))
    with pytest.raises(SealInvalid):
        store.get("records/clinic-a/old")


def test_sealed_store_shred_destroys_every_kek_version(
    store: ObjectStore, keyring: Keyring
) -> None:
    """Shredding a tenant whose KEK rotated removes every version; its objects all fail."""
    assert keyring.directory is not None
    store.create("records/clinic-a/v0", b"0")
    keys.rotate_kek(keyring.directory, "clinic-a")
    store.create("records/clinic-a/v1", b"1")
    keys.shred(keyring.directory, "clinic-a")
    assert not list(keyring.directory.glob("kek-clinic-a*.key"))
    for key in ("records/clinic-a/v0", "records/clinic-a/v1"):
        with pytest.raises(TenantShredded):
            store.get(key)
    assert keyring.scopes()["clinic-a"] == "shredded"


def test_sealed_store_kek_versions_from_a_json_secret(tmp_path: Path) -> None:
    """In CUSTODY_KEYS_JSON, ``clinic-a.1`` is version 1 of clinic-a's KEK: it wraps new
    objects, and an object wrapped by version 0 under another keyring still opens."""
    k0, k1 = os.urandom(32), os.urandom(32)
    old = Keyring(payload={"k1": os.urandom(32)}, keks={"clinic-a": k0})
    new = Keyring(payload={"k1": os.urandom(32)}, keks={"clinic-a": k0, "clinic-a.1": k1})
    SealedStore(LocalStore(tmp_path / "objects"), old).create("records/clinic-a/v0", b"0")
    store = SealedStore(LocalStore(tmp_path / "objects"), new)
    store.create("records/clinic-a/v1", b"1")
    assert new.current_kek("clinic-a") == (1, k1) and new.scopes() == {"clinic-a": "active"}
    assert store.get("records/clinic-a/v0") == b"0" and store.get("records/clinic-a/v1") == b"1"
    with pytest.raises(ConfigurationError):
        SealedStore(LocalStore(tmp_path / "objects"), old).get("records/clinic-a/v1")
