"""Keys outside their validity cannot sign what verifies: rotation ends the old key.

Real key folders, a real store and a witness server on loopback. The insider
case: the old key's private bytes are still on disk after rotation, and an
insider signs a checkpoint with them outside Custody's own refusal; the
witness cosigns it (a witness knows nothing of validity), and its cosignature's
time is what shows the key had already ended.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from custody.errors import Code, KeyUntrusted
from custody.ledger.checkpoints import Notary
from custody.ledger.events import Ledger
from custody.ledger.signing import Signer, load_signer, public_keys, retired_keys, rotate
from custody.ledger.witness import WitnessClient, WitnessPolicy
from custody.stores.local import LocalStore
from starter.evidence.verify.proofs import LogProofs


def test_key_validity_rotation_ends_the_old_key_for_signing(tmp_path: Path) -> None:
    """After ``rotate`` the old key's validity ends now: it refuses to sign, and says why."""
    old = rotate(tmp_path)
    assert old.sign(b"before").kid == old.kid
    new = rotate(tmp_path)
    first = sorted(tmp_path.glob("*.json"))[0]  # the old key's validity file
    assert json.loads(first.read_text())["valid_to"] is not None
    (ended,) = retired_keys(tmp_path)
    assert ended.kid == old.kid and load_signer(tmp_path, None, production=False).kid == new.kid
    with pytest.raises(KeyUntrusted) as err:
        ended.sign(b"after")
    assert err.value.code is Code.KEY_OUTSIDE_VALIDITY


def test_key_validity_production_refuses_a_key_without_one(tmp_path: Path) -> None:
    """The environment secret and a key file without its validity file have none: refused."""
    seed = base64.b64encode(Ed25519PrivateKey.generate().private_bytes_raw()).decode()
    assert load_signer(tmp_path / "none", seed, production=False).valid_from is None
    with pytest.raises(KeyUntrusted, match="no validity period"):
        load_signer(tmp_path / "none", seed, production=True)
    rotate(tmp_path / "keys")
    next((tmp_path / "keys").glob("*.json")).unlink()
    with pytest.raises(KeyUntrusted, match="no validity period"):
        load_signer(tmp_path / "keys", None, production=True)


def test_key_validity_published_retirement_shortens_what_verifiers_accept(tmp_path: Path) -> None:
    """The retirement record, self-signed, ends the key for verifiers; a forged one is ignored."""
    store = LocalStore(tmp_path / "objects")
    old = rotate(tmp_path / "keys")
    old.publish(store)
    assert public_keys(store)[old.kid].valid_to is None
    rotate(tmp_path / "keys")
    for ended in retired_keys(tmp_path / "keys"):
        ended.publish(store)
    assert public_keys(store)[old.kid].valid_to is not None
    forged = json.loads(store.get(f"keys/signing/retired/{old.kid}.json"))
    forged["valid_to"] = "2000-01-01T00:00:00Z"
    store.delete(f"keys/signing/retired/{old.kid}.json")
    store.create(f"keys/signing/retired/{old.kid}.json", json.dumps(forged).encode())
    assert public_keys(store)[old.kid].valid_to is None  # not signed by the key: no effect


def test_key_validity_checkpoint_signed_after_the_key_ended_fails(
    tmp_path: Path, signer: Signer, witness: WitnessClient
) -> None:
    """An insider signs with the rotated-out key's bytes; the witness cosigns; verification
    sees the cosignature's time is past the key's end: KEY_OUTSIDE_VALIDITY."""
    store = LocalStore(tmp_path / "objects")
    signer.publish(store)
    ledger = Ledger(store, "t", Notary(signer, cosigners=[witness]))
    ledger.append("staged", sha256="ab" * 32)
    ledger.flush()
    policy = WitnessPolicy({witness.name: witness.key}, 1, (witness,))
    assert all(c.ok for c in LogProofs(policy=policy).checks(ledger, {1}, public_keys(store)))
    rotate(tmp_path / "signing")  # the fixture's folder: the signer's key ends now
    for ended in retired_keys(tmp_path / "signing"):
        ended.publish(store)
    time.sleep(1.1)  # cosignature times are whole seconds
    raw = (tmp_path / "signing").glob("*.key")
    seed = base64.b64decode(sorted(raw)[0].read_text())
    insider = Signer(Ed25519PrivateKey.from_private_bytes(seed))  # no validity: no refusal
    forged = Ledger(LocalStore(tmp_path / "objects"), "t", Notary(insider, cosigners=[witness]))
    forged.append("staged", sha256="ab" * 32)
    forged.flush()
    checks = LogProofs(policy=policy).checks(Ledger(store, "t"), {1, 2}, public_keys(store))
    failed = {c.name: c.detail for c in checks if not c.ok}
    assert f"KEY_OUTSIDE_VALIDITY: checkpoint 2 signed by {signer.kid}" in failed["ledger.witness"]
