"""A ledger written by the code before tiles (main at bed1802) is read, verified and migrated.

``legacy-ledger-bed1802.tar.gz`` holds what that code wrote (an unsealed local
store, its development signing key and a witness folder), made with:

    signer = rotate(out / "signing", development=True)
    store, witness = LocalStore(out / "objects"), LocalStore(out / "witness")
    notary = Notary(signer, witness); signer.publish(store)
    ledger = Ledger(store, "t", notary)
    for i in range(15):                      # 3 documents, events 1..15 checkpointed
        ledger.append(kinds[i // 3], sha256=docs[i % 3], actor="legacy", detail={"step": str(i)})
    record_egress(store, "t", EgressKind.EXPORT, ...)   # event 16, no checkpoint
    Ledger(store, "t").append("verified", sha256=docs[1], actor="legacy")  # event 17

so events 16 and 17 are past its newest checkpoint, as on real ledgers.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from custody import egress as eg
from custody.errors import LedgerInvalid
from custody.ledger import tlog
from custody.ledger.checkpoints import Notary
from custody.ledger.events import Ledger, event_key
from custody.ledger.signing import PublicKeyRecord, Signer, load_signer, public_keys
from custody.state.egress import egress_events, record_egress
from custody.stores.local import LocalStore
from starter.evidence.verify.audit import verify_log
from starter.evidence.verify.proofs import LogProofs
from starter.evidence.verify.report import Report

FIXTURE = Path(__file__).with_name("legacy-ledger-bed1802.tar.gz")
DOCS = [f"{i:064x}" for i in (0xA1, 0xB2, 0xC3)]


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path, filter="data")
    os.chmod(tmp_path / "signing", 0o700)
    for key in (tmp_path / "signing").iterdir():
        os.chmod(key, 0o600)
    return tmp_path


def _parts(root: Path) -> tuple[LocalStore, LocalStore, Signer, dict[str, PublicKeyRecord]]:
    store = LocalStore(root / "objects")
    signer = load_signer(root / "signing", None, production=False)
    return store, LocalStore(root / "witness"), signer, public_keys(store)


def _failed(report: Report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def test_legacy_ledger_reads_and_verifies_before_migration(legacy: Path) -> None:
    """Nothing rewritten yet: its events, index, proofs and witness notes all hold as they are."""
    store, witness, _, keys = _parts(legacy)
    ledger = Ledger(store, "t")
    assert ledger.is_legacy() and ledger.head() == 17
    assert [e.seq for e in ledger.for_document(DOCS[0])] == [1, 4, 7, 10, 13, 16]
    assert [e.seq for e in egress_events(store, "t")] == [16]
    report = verify_log(store, "t", keys, witness)
    assert report.ok, report
    proven = LogProofs(witness).checks(ledger, {1, 13, 16}, keys)
    assert [c.ok for c in proven] == [True, True], proven
    assert "2 events in checkpoint 15; 1 after it" in proven[0].detail


def test_legacy_ledger_migrates_on_the_first_append_with_the_same_tree(legacy: Path) -> None:
    """The tiles are built from the old events' exact bytes: every old checkpoint still holds."""
    store, witness, signer, keys = _parts(legacy)
    old = [Ledger(store, "t").entry(seq) for seq in range(1, 18)]
    ledger = Ledger(store, "t", Notary(signer, witness))
    event = ledger.append("staged", sha256=DOCS[2], actor="tiled")
    ledger.flush()
    assert event.seq == 18 and event.prev == Ledger(store, "t").get(17).hash
    fresh = Ledger(store, "t")
    assert not fresh.is_legacy() and fresh.size() == 18
    assert [fresh.entry(seq) for seq in range(1, 18)] == old
    leaves = [tlog.leaf_hash(e) for e in old]
    assert fresh.tree().root(15) == tlog.root(leaves[:15])  # what checkpoint 15 signed
    report = verify_log(store, "t", keys, witness)
    assert report.ok, report
    assert [e.seq for e in fresh.for_document(DOCS[2])] == [3, 6, 9, 12, 15, 18]
    assert store.exists(event_key("t", 17))  # old objects stay, never read again


def test_legacy_ledger_old_copy_altered_after_migration_fails(legacy: Path) -> None:
    """Once migrated, an old event object changed is a contradiction the full audit names."""
    store, witness, signer, keys = _parts(legacy)
    record_egress(
        store,
        "t",
        eg.EgressKind.EXPORT,
        actor="tiled",
        policy=eg.EXPORT_POLICY,
        documents=[DOCS[1]],
        bytes_sha256="f" * 64,
        size=3,
    )
    Ledger(store, "t", Notary(signer, witness)).flush()
    path = store.root / event_key("t", 5)
    path.write_bytes(path.read_bytes().replace(b"legacy", b"LEGACY"))
    failed = _failed(verify_log(store, "t", keys, witness))
    assert failed == {"ledger.tiles": "event 5 differs from its copy before tiles"}


def test_legacy_ledger_with_a_hole_is_not_migrated(legacy: Path) -> None:
    """An old event missing below the newest: appends refuse (LEDGER_INVALID), nothing moves."""
    store, witness, signer, keys = _parts(legacy)
    (store.root / event_key("t", 9)).unlink()
    with pytest.raises(LedgerInvalid, match="old event 9 missing"):
        Ledger(store, "t", Notary(signer)).append("staged", sha256=DOCS[0])
    assert not store.exists("ledger/t/integrated")
    failed = _failed(verify_log(store, "t", keys, witness))
    assert "event 9 missing" in failed["ledger.chain"]
