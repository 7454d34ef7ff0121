"""State versions are signed and chained: a store insider without keys cannot forge,
splice or roll them back unseen, and the operator's own changes still read back.

Each attack is played on the real local store with real Ed25519 keys: the insider
can write and delete any object, but holds no key from the signing folder.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from custody.canonical import canonical_json
from custody.errors import Code, StateInvalid
from custody.ledger.signing import Signer, rotate
from custody.settings import Settings
from custody.state import versions
from custody.state.ocr_config import PIN_PREFIX, ConfigRegistry, OcrConfig
from custody.state.pools import LIMITS_PREFIX, read_limits, set_limit
from custody.state.signers import StateKeys, state_keys
from custody.stores.local import LocalStore
from starter.edge import tenants

PREFIX = "pools/limits/"


@pytest.fixture
def keys(tmp_path: Path) -> StateKeys:
    return state_keys(Settings(home=tmp_path / "home"))


def _store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "objects")


def _forge(store: LocalStore, prefix: str, n: int, body: str, signer: Signer | None) -> None:
    """What an insider writes: a well-formed next version, signed by ``signer`` or not at all."""
    prev = versions._sha256(store.get(versions._key(prefix, n - 1)))
    version = versions._Version(prefix=prefix, n=n, prev=prev, body=body)
    if signer is not None:
        version = version.model_copy(update={"sig": signer.sign(version.payload())})
    store.put(versions._key(prefix, n), canonical_json(version.model_dump(mode="json")))


def _fresh(store: LocalStore) -> LocalStore:
    """The same objects seen by another process, which has read nothing yet."""
    return LocalStore(store.root)


def test_versions_sealed_chain_reads_back_and_survives_rotation(
    tmp_path: Path, keys: StateKeys
) -> None:
    """Signed appends read back newest-first, also after the signing key was rotated."""
    store = _store(tmp_path)
    assert versions.append(store, PREFIX, b'{"a":1}', keys=keys) == 1
    rotated = state_keys(Settings(home=tmp_path / "home"))  # before the rotation lands
    rotate(tmp_path / "home" / "signing")
    after = state_keys(Settings(home=tmp_path / "home"))
    assert after.signer is not None and rotated.signer is not None
    assert after.signer.kid != rotated.signer.kid
    assert versions.append(store, PREFIX, b'{"a":2}', keys=after) == 2
    assert versions.latest(_fresh(store), PREFIX, keys=after) == b'{"a":2}'
    stored = json.loads(store.get(versions._key(PREFIX, 2)))
    assert stored["prev"] == versions._sha256(store.get(versions._key(PREFIX, 1)))


@pytest.mark.parametrize("signed_by", ["nobody", "insider"])
def test_versions_forged_newer_version_is_refused(
    tmp_path: Path, keys: StateKeys, signed_by: str
) -> None:
    """A newer version without a signature, or signed by a key of the insider's, raises."""
    store = _store(tmp_path)
    versions.append(store, PREFIX, b'{"limits":{"ocr":2}}', keys=keys)
    insider = Signer(Ed25519PrivateKey.generate()) if signed_by == "insider" else None
    _forge(store, PREFIX, 2, '{"limits":{"ocr":64}}', insider)
    with pytest.raises(StateInvalid) as err:
        versions.latest(_fresh(store), PREFIX, keys=keys)
    assert err.value.code is Code.STATE_INVALID
    with pytest.raises(StateInvalid):  # nor is a change stacked on top of it
        versions.append(_fresh(store), PREFIX, b'{"limits":{}}', keys=keys)


def test_versions_deleted_middle_version_is_detected(tmp_path: Path, keys: StateKeys) -> None:
    """Deleting version 2 of 3 leaves a gap that every reader refuses."""
    store = _store(tmp_path)
    for body in (b"1", b"2", b"3"):
        versions.append(store, PREFIX, body, keys=keys)
    store.delete(versions._key(PREFIX, 2))
    with pytest.raises(StateInvalid, match="version 2 is missing"):
        versions.latest(_fresh(store), PREFIX, keys=keys)


def test_versions_spliced_version_is_detected(tmp_path: Path, keys: StateKeys) -> None:
    """A genuine version copied to another number or prefix is out of its chain."""
    store = _store(tmp_path)
    versions.append(store, PREFIX, b"1", keys=keys)
    versions.append(store, "admission/state/", b"paused", keys=keys)
    store.put(versions._key(PREFIX, 2), store.get(versions._key("admission/state/", 1)))
    with pytest.raises(StateInvalid, match="out of its chain"):
        versions.latest(_fresh(store), PREFIX, keys=keys)


def test_versions_rollback_of_newest_is_detected_by_a_reader(
    tmp_path: Path, keys: StateKeys
) -> None:
    """A reader that saw version 2 refuses the chain once version 2 is deleted or replaced."""
    store = _store(tmp_path)
    versions.append(store, PREFIX, b"old", keys=keys)
    versions.append(store, PREFIX, b"new", keys=keys)
    reader = _fresh(store)
    assert versions.latest(reader, PREFIX, keys=keys) == b"new"
    newest = store.get(versions._key(PREFIX, 2))
    store.delete(versions._key(PREFIX, 2))
    with pytest.raises(StateInvalid, match="seen and is gone"):
        versions.latest(reader, PREFIX, keys=keys)
    store.put(versions._key(PREFIX, 2), newest.replace(b"new", b"NEW"))
    with pytest.raises(StateInvalid, match="changed since it was read"):
        versions.latest(reader, PREFIX, keys=keys)


def test_versions_callers_refuse_forged_pool_limit_and_pin(tmp_path: Path) -> None:
    """Pool limits and the OCR pin, as their readers see them, refuse an unsigned newer version."""
    store = _store(tmp_path)
    set_limit(store, "ocr", 2)
    _forge(store, LIMITS_PREFIX, 2, json.dumps({"limits": {"ocr": 64}}), None)
    with pytest.raises(StateInvalid):
        read_limits(_fresh(store))
    registry = ConfigRegistry(store)
    entry = registry.observe(OcrConfig(engine="tesseract", version="5", params={}), "worker-1")
    assert entry is not None
    registry.pin(entry, "operator", "known good")
    forged = OcrConfig(engine="tesseract", version="5", params={"psm": 0}).model_dump_json()
    _forge(store, PIN_PREFIX, 2, forged, None)
    with pytest.raises(StateInvalid):
        ConfigRegistry(_fresh(store)).pinned()


def test_versions_reader_without_signer_verifies_but_cannot_write(
    tmp_path: Path, keys: StateKeys
) -> None:
    """Trusted public keys alone read the chain; writing needs the signing key."""
    store = _store(tmp_path)
    versions.append(store, PREFIX, b"1", keys=keys)
    reader = StateKeys(signer=None, trusted=keys.trusted)
    assert versions.latest(_fresh(store), PREFIX, keys=reader) == b"1"
    with pytest.raises(Exception, match="no signing key"):
        versions.append(store, PREFIX, b"2", keys=reader)


def test_versions_tenant_record_forged_with_insiders_key_hash_is_refused(tmp_path: Path) -> None:
    """An insider who writes a newer tenant version holding their own key's hash gets no access."""
    store = _store(tmp_path)
    tenant, api_key = tenants.add(store, "clinic-a")
    assert tenants.authenticate(store, api_key).name == "clinic-a"
    secret = "insider-chosen-secret"
    theirs = tenant.model_copy(update={"key_sha256": hashlib.sha256(secret.encode()).hexdigest()})
    store.put("tenants/clinic-a.json", theirs.model_dump_json().encode())  # the plain record
    with pytest.raises(tenants.AuthError):
        tenants.authenticate(_fresh(store), f"cst_{tenant.key_id}_{secret}")
    _forge(store, "tenants/clinic-a/record/", 2, theirs.model_dump_json(), None)
    with pytest.raises(StateInvalid):
        tenants.authenticate(_fresh(store), f"cst_{tenant.key_id}_{secret}")


def test_versions_tenant_revocation_cannot_be_deleted_or_undone(tmp_path: Path) -> None:
    """A revocation is a signed version: deleting it is detected by a reader that saw it,
    and by a fresh one through the transparency log (custody.state.anchor)."""
    store = _store(tmp_path)
    _, api_key = tenants.add(store, "clinic-b")
    tenants.revoke(store, "clinic-b")
    with pytest.raises(tenants.AuthError) as err:
        tenants.authenticate(store, api_key)
    assert err.value.revoked is True
    store.delete("tenants/clinic-b/record/v0000000002.json")
    with pytest.raises(StateInvalid, match="seen and is gone"):
        tenants.authenticate(store, api_key)
    with pytest.raises(StateInvalid, match="log holds version 2"):
        tenants.list_tenants(_fresh(store))
