"""``custody audit verify``'s checks on a real ledger: tampering, truncation, rogue keys, shredding.

Each case appends real events through ``Ledger`` with a ``Notary`` (a real
signing key, a witness folder) and then changes the stored objects as an
attacker with write access to the store would.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from custody.keys import keyring as keyring_mod
from custody.ledger.checkpoints import Notary, witness_key
from custody.ledger.events import Ledger, marker_key
from custody.ledger.signing import PublicKeyRecord, Signer, rotate
from custody.ledger.tiles import bundle_key, decode_bundle, encode_bundle
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from custody.stores.patient import PatientStore
from custody.stores.sealed import SealedStore
from starter.evidence.verify.audit import verify_log
from starter.evidence.verify.report import Report
from tests.custody.ledger.forge import forge, history

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
    ledger.flush()  # racing writers: whoever integrates last may not have signed it all


def _failed(report: Report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def _remove(store: LocalStore, *keys: str) -> None:
    for key in keys:
        (store.root / key).unlink()


def _bundle(store: LocalStore, size: int, tenant: str = "t") -> Path:
    """The file of the log's one (partial) entry bundle: fewer than 256 events here."""
    return store.root / bundle_key(f"ledger/{tenant}/", 0, size)


def _rewrite(store: LocalStore, change: Callable[[list[bytes]], list[bytes]]) -> None:
    """An attacker with write access edits the entry bundle in place."""
    path = _bundle(store, Ledger(store, "t").size())
    path.write_bytes(encode_bundle(change(decode_bundle(path.read_bytes()))))


def test_ledger_audit_every_append_is_checkpointed_and_witnessed(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """Rejections, quarantines and releases are covered, not only publishes: each integration
    ends with a checkpoint (one per batch here: one writer) that the archive keeps too."""
    _append(store, Notary(signer, witness), 10)
    report = verify_log(store, "t", _keys(signer), witness)
    assert report.ok, report
    assert Ledger(store, "t").checkpoint_sizes() == list(range(1, 11))
    assert witness.exists(witness_key("t", 10))
    assert {c.name for c in report.checks} == {
        "ledger.chain",
        "ledger.tiles",
        "ledger.tree",
        "ledger.witness",
        "ledger.batches",
        "ledger.index",
    }


def test_ledger_audit_altered_event_fails_chain_tiles_and_tree(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """One event's bytes changed in its bundle: its hash, the tiles, every later head disagree."""
    _append(store, Notary(signer, witness), 8)
    _rewrite(store, lambda e: [*e[:3], e[3].replace(b'"code":null', b'"code":"X"'), *e[4:]])
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "event 4 altered" in failed["ledger.chain"]
    assert "tile/0/000.p/8 altered" in failed["ledger.tiles"]  # the hash tile keeps the truth
    assert "checkpoint 4 disagrees with the log" in failed["ledger.tree"]
    assert "event 4 differs from its batch" in failed["ledger.batches"]


def test_ledger_audit_deleted_event_fails_chain_and_tree(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """An event cut out of its bundle: the next one sits in its place, and the heads disagree
    (the hash tiles, left alone, still match the archive: they are not what was changed)."""
    _append(store, Notary(signer, witness), 8)
    _rewrite(store, lambda e: [*e[:3], *e[4:]])
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "event 4 holds seq 5 (moved)" in failed["ledger.chain"]
    assert "checkpoint 4 disagrees with the log" in failed["ledger.tree"]
    assert "tile/entries/000.p/8 altered" in failed["ledger.tiles"]


def test_ledger_audit_reordered_events_fail(
    store: LocalStore, witness: LocalStore, signer: Signer
) -> None:
    """Two events swapped in place are named as moved, and the signed heads no longer match."""
    _append(store, Notary(signer, witness), 6)
    _rewrite(store, lambda e: [e[0], e[1], e[3], e[2], e[4], e[5]])
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "event 3 holds seq 4 (moved)" in failed["ledger.chain"]
    assert "checkpoint 3 disagrees" in failed["ledger.tree"]
    assert "ledger.index" in failed  # the index names the events where they were


def test_ledger_audit_truncation_with_checkpoints_is_caught_by_the_archive(
    tmp_path: Path, witness: LocalStore, signer: Signer
) -> None:
    """The log cut back to 6 with its checkpoints re-signed: a valid store; the archive tells."""
    root = tmp_path / "objects"
    _append(LocalStore(root), Notary(signer, witness), 9)
    store = forge(root, "t", history(root, "t")[:6], Notary(signer))
    alone = verify_log(store, "t", _keys(signer))
    assert alone.ok, alone  # without the archive, a clean shorter log
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert set(failed) == {"ledger.witness"}
    assert "covers 9 events, the log has 6 (truncated)" in failed["ledger.witness"]


def test_ledger_audit_history_rewritten_with_rogue_key_fails_with_pinned_key(
    tmp_path: Path, witness: LocalStore, signer: Signer
) -> None:
    """A rogue key re-signs a rewritten tail: trusting only the pinned key exposes it."""
    root = tmp_path / "objects"
    _append(LocalStore(root), Notary(signer, witness), 8)
    rogue = rotate(tmp_path / "rogue")
    events = history(root, "t")
    changed = [e.model_copy(update={"code": "FORGED"}) for e in events[4:]]
    store = forge(root, "t", events[:4] + changed, Notary(rogue))
    rogue.publish(store)
    everyone = verify_log(store, "t", _keys(signer, rogue))
    assert "ledger.tree" not in _failed(everyone)  # trusting the store's keys, it looks fine
    pinned = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "checkpoint 8 not signed by a trusted key" in pinned["ledger.tree"]
    assert "disagrees with the log (rewritten)" in pinned["ledger.witness"]


def test_ledger_audit_every_archived_note_counts_not_only_the_newest(
    tmp_path: Path, witness: LocalStore, signer: Signer
) -> None:
    """Rewrite-and-outgrow against the archive: an egress event dropped, the log re-signed and
    grown past its old head, a note beyond it archived. The older notes still tell."""
    root = tmp_path / "objects"
    _append(LocalStore(root), Notary(signer, witness), 8)
    events = [e for i, e in enumerate(history(root, "t")) if i != 2]
    extra = [events[-1].model_copy(update={"actor": f"x{i}"}) for i in range(5)]
    store = forge(root, "t", events + extra, Notary(signer, witness))
    assert Ledger(store, "t").size() == 12 and witness.exists(witness_key("t", 12))
    failed = _failed(verify_log(store, "t", _keys(signer), witness))
    assert "archived checkpoint 3 disagrees with the log (rewritten)" in failed["ledger.witness"]


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
    path = _bundle(raw, 5, "clinic-b")
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
