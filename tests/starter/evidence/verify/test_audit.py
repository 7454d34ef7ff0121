"""``custody audit verify``'s checks on a real ledger: tampering, truncation, rogue keys, shredding.

Each case appends real events through ``Ledger`` with a ``Notary`` (a real
signing key, a witness folder) and then changes the stored objects as an
attacker with write access to the store would.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from custody.keys import keyring as keyring_mod
from custody.ledger.checkpoints import Notary, witness_key
from custody.ledger.events import Ledger, checkpoint_key, event_key, marker_key
from custody.ledger.signing import PublicKeyRecord, Signer, rotate
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from custody.stores.patient import PatientStore
from custody.stores.sealed import SealedStore
from starter.evidence.verify.audit import verify_log
from starter.evidence.verify.report import Report

DOCS = [f"{i:064x}" for i in (1, 2, 3)]
KINDS = ["staged", "rejected", "quarantined", "quarantine_release", "published"]


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "objects")


@pytest.fixture
def witness(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "witness")


@pytest.fixture
def signer(tmp_path: Path) -> Signer:
    return rotate(tmp_path / "signing")


def _keys(*signers: Signer) -> dict[str, PublicKeyRecord]:
    return {s.kid: s.public_record() for s in signers}


def _append(store: ObjectStore, notary: Notary, n: int, tenant: str | None = "t") -> None:
    ledger = Ledger(store, tenant, notary)
    for i in range(n):
        ledger.append(KINDS[i % len(KINDS)], sha256=DOCS[i % len(DOCS)], code=None)


def _failed(report: Report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def _remove(store: LocalStore, *keys: str) -> None:
    for key in keys:
        (store.root / key).unlink()


def test_ledger_audit_every_append_is_checkpointed_and_witnessed(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """Rejections, quarantines and releases are covered, not only publishes: one checkpoint each."""
    _append(store, Notary(signer, witness), 10)
    report = verify_log(store, "t", _keys(signer), witness)
    assert report.ok, report
    assert Ledger(store, "t").checkpoint_sizes() == list(range(1, 11))
    assert witness.exists(witness_key("t", 10))
    assert {c.name for c in report.checks} == {
        "ledger.chain",
        "ledger.tree",
        "ledger.witness",
        "ledger.index",
    }


def test_ledger_audit_deleted_event_fails_chain_and_tree(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """A deleted middle event is a hole in the chain and changes every later tree head."""
    _append(store, Notary(signer, witness), 8)
    _remove(store, event_key("t", 4))
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "event 4 missing" in failed["ledger.chain"]
    assert "checkpoint 4 disagrees with the log" in failed["ledger.tree"]
    assert "rewritten" in failed["ledger.witness"]


def test_ledger_audit_reordered_events_fail(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """Two events swapped in place are named as moved, and the signed heads no longer match."""
    _append(store, Notary(signer, witness), 6)
    a, b = store.root / event_key("t", 3), store.root / event_key("t", 4)
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "event 3 holds seq 4 (moved)" in failed["ledger.chain"]
    assert "checkpoint 3 disagrees" in failed["ledger.tree"]
    assert "ledger.index" in failed  # the index names the events where they were


def test_ledger_audit_truncation_with_checkpoints_is_caught_by_the_witness(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """Deleting the newest events and their checkpoints leaves a valid store; the witness tells."""
    _append(store, Notary(signer, witness), 9)
    for seq in (7, 8, 9):
        _remove(store, event_key("t", seq), checkpoint_key("t", seq))
        for doc in DOCS:
            if store.exists(marker_key("t", doc, seq)):
                _remove(store, marker_key("t", doc, seq))
    store.put("ledger/t/head.json", b"6")
    alone = verify_log(store, "t", _keys(signer))
    assert alone.ok, alone  # without the witness, a clean shorter log
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert set(failed) == {"ledger.witness"}
    assert "covers 9 events, the log has 6 (truncated)" in failed["ledger.witness"]


def test_ledger_audit_history_rewritten_with_rogue_key_fails_with_pinned_key(
    store: LocalStore, witness: LocalStore, signer: Signer, tmp_path: Path
) -> None:
    """A rogue key re-signs a rewritten tail: trusting only the pinned key exposes it."""
    _append(store, Notary(signer, witness), 8)
    shutil.rmtree(store.root / "ledger" / "t" / "by-doc")
    for seq in range(5, 9):
        _remove(store, event_key("t", seq), checkpoint_key("t", seq))
    store.put("ledger/t/head.json", b"4")
    rogue = rotate(tmp_path / "rogue")
    rogue.publish(store)
    _append(store, Notary(rogue), 4)  # new events 5..8, checkpoints by the rogue key
    everyone = verify_log(store, "t", _keys(signer, rogue))
    assert "ledger.tree" not in _failed(everyone)  # trusting the store's keys, it looks fine
    pinned = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "checkpoint 5 not signed by a trusted key" in pinned["ledger.tree"]
    assert "disagrees with the log (rewritten)" in pinned["ledger.witness"]


def test_ledger_audit_index_entry_missing_altered_or_foreign_fails(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """A by-document index entry deleted, changed or pointing at another document is a FAIL."""
    _append(store, Notary(signer, witness), 6)
    _remove(store, marker_key("t", DOCS[0], 1))
    (store.root / marker_key("t", DOCS[1], 2)).write_bytes(b"x")
    store.create(marker_key("t", DOCS[0], 3), b"")  # event 3 is DOCS[2]'s
    detail = _failed(verify_log(store, "t", _keys(signer), witness))["ledger.index"]
    assert "event 1 missing from the index" in detail
    assert "index entry 2 altered" in detail
    assert "index entry 3 names another document's event" in detail


def test_ledger_audit_shredded_tenant_still_verifies_while_others_report(
    tmp_path: Path, witness: LocalStore, signer: Signer
) -> None:
    """The ledger is sealed under the system key: shredding a tenant leaves its trail verifiable."""
    ring = keyring_mod.init_keyring(tmp_path / "keys", development=True)
    raw = LocalStore(tmp_path / "objects")
    sealed = SealedStore(raw, ring)
    notary = Notary(signer, witness)
    for tenant in ("clinic-a", "clinic-b"):
        _append(sealed, notary, 5, tenant)
    assert ring.directory is not None
    keyring_mod.shred(ring.directory, "clinic-a")
    path = raw.root / event_key("clinic-b", 2)
    path.write_bytes(path.read_bytes()[:-1] + bytes([path.read_bytes()[-1] ^ 1]))
    reports = {t: verify_log(sealed, t, _keys(signer), witness) for t in ("clinic-a", "clinic-b")}
    assert reports["clinic-a"].ok, reports["clinic-a"]
    assert "event 2 altered (unreadable)" in _failed(reports["clinic-b"])["ledger.chain"]


def test_ledger_audit_racing_appenders_leave_one_verifiable_log(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """Eight writers appending at once: no fork, no gap, and every checkpoint names a true head."""
    notary = Notary(signer, witness)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: _append(store, notary, 5), range(8)))
    report = verify_log(store, "t", _keys(signer), witness)
    assert report.ok, report
    assert Ledger(store, "t").sequence_numbers() == list(range(1, 41))


def test_ledger_audit_wrapped_sealed_store_still_seals_the_ledger_under_the_system_key(
    tmp_path: Path, signer: Signer
) -> None:
    """Under a wrapper (patient retries), the ledger is still sealed under the system KEK."""
    ring = keyring_mod.init_keyring(tmp_path / "keys", development=True)
    store = PatientStore(SealedStore(LocalStore(tmp_path / "objects"), ring))
    _append(store, Notary(signer), 3, "clinic-c")
    assert ring.directory is not None
    keyring_mod.shred(ring.directory, "clinic-c")
    assert verify_log(store, "clinic-c", _keys(signer)).ok
    assert len(Ledger(store, "clinic-c").for_document(DOCS[0])) == 1
