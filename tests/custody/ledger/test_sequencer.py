"""Batched sequencing (custody.ledger.sequencer) under many threads and processes, and crashes.

Writers are real threads and real processes on one local store. What must
hold: one chain with no gap or fork, each event acknowledged exactly once, the
by-document and egress indexes naming exactly their events, far fewer batches
than events (writers contend per batch), and an acknowledged event never lost
when integration fails or its process dies before integrating.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from custody import egress as eg
from custody.ledger import tlog
from custody.ledger.checkpoints import Notary
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import rotate
from custody.state.egress import egress_events, record_egress
from custody.stores import ObjectStore
from custody.stores.local import LocalStore

DOCS = [f"{i:064x}" for i in range(1, 13)]


def _write(store: ObjectStore, who: str, n: int) -> list[Event]:
    """``n`` appends as one writer: document events, every fifth an egress event."""
    ledger, done = Ledger(store, "t"), []
    for i in range(n):
        doc = DOCS[(sum(map(ord, who)) + i) % len(DOCS)]
        if i % 5 == 4:
            done.append(
                record_egress(
                    store,
                    "t",
                    eg.EgressKind.EXPORT,
                    actor=f"{who}/{i}",
                    policy=eg.EXPORT_POLICY,
                    documents=[doc],
                    bytes_sha256="e" * 64,
                    size=i,
                )
            )
        else:
            done.append(ledger.append("staged", sha256=doc, actor=f"{who}/{i}"))
    return done


def _process(root: str, who: str) -> None:
    store = LocalStore(Path(root))
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda t: _write(store, f"{who}t{t}", 20), range(3)))


def _assert_one_log(store: ObjectStore, writers: int, each: int) -> list[Event]:
    ledger = Ledger(store, "t")
    ledger.flush()
    ledger = Ledger(store, "t")
    events = list(ledger.events())
    assert [e.seq for e in events] == list(range(1, writers * each + 1))
    pairs = zip(events, events[1:], strict=False)
    assert all(b.prev == a.hash and b.hash == b.body_hash() for a, b in pairs)
    assert len({e.actor for e in events}) == len(events)  # each append exactly once
    for doc in DOCS:
        assert [e.seq for e in ledger.for_document(doc)] == [
            e.seq for e in events if e.sha256 == doc
        ]
    assert [e.seq for e in egress_events(store, "t")] == [
        e.seq for e in events if e.kind == eg.EGRESS_EVENT
    ]
    assert ledger.tree().root() == tlog.root([tlog.leaf_hash(ledger.entry(e.seq)) for e in events])
    return events


def test_sequencer_threads_share_batches_and_keep_every_index(tmp_path: Path) -> None:
    """Eight threads: one chain, exact indexes, and writers meeting in shared batches."""
    store = LocalStore(tmp_path)
    with ThreadPoolExecutor(8) as pool:
        written = pool.map(lambda w: _write(store, f"w{w}", 30), range(8))
        acked = [e for done in written for e in done]
    events = _assert_one_log(store, 8, 30)
    assert {(e.seq, e.hash) for e in acked} == {(e.seq, e.hash) for e in events}
    batches = list(store.list("ledger/t/batch/"))
    assert len(batches) < len(events)  # several events per batch, not one object each


def test_sequencer_processes_race_for_batches_without_forking(tmp_path: Path) -> None:
    """Four processes of three threads each, on one store: they race per batch, never fork."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process, args=(str(tmp_path), f"p{p}")) for p in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(300)
        assert proc.exitcode == 0
    _assert_one_log(LocalStore(tmp_path), 12, 20)


class _NoTiles:
    """A stand-in that injects a fault: the store refuses tile writes, as in an outage."""

    def __init__(self, inner: LocalStore) -> None:
        self.inner = inner

    def create(self, key: str, data: bytes) -> bool:
        if "/tile/" in key:
            raise OSError("injected: tiles unwritable")
        return self.inner.create(key, data)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def test_sequencer_acknowledged_event_survives_failed_integration(tmp_path: Path) -> None:
    """Integration fails after the batch is durable: the event is found, then integrated later."""
    signer = rotate(tmp_path / "signing")
    faulty = _NoTiles(LocalStore(tmp_path / "objects"))
    event = Ledger(faulty, "t").append("staged", sha256=DOCS[0])  # type: ignore[arg-type]
    store = LocalStore(tmp_path / "objects")
    assert Ledger(store, "t").size() == 0  # nothing integrated
    assert Ledger(store, "t").get(1) == event  # yet readable from its batch
    assert [e.seq for e in Ledger(store, "t").for_document(DOCS[0])] == [1]
    later = Ledger(store, "t", Notary(signer)).append("staged", sha256=DOCS[0])
    ledger = Ledger(store, "t")
    assert (later.seq, ledger.size(), ledger.checkpoint_size()) == (2, 2, 2)
    assert store.exists(f"ledger/t/by-doc/{DOCS[0]}/{1:012d}")


def test_sequencer_retry_after_crash_finds_its_pending_event(tmp_path: Path) -> None:
    """An append_once whose process died before integrating: the retry finds it, no twin."""
    from custody.state.egress import append_once

    once = {"once": "releases/t/r1", "workflow_id": "w"}
    first = append_once(_NoTiles(LocalStore(tmp_path)), "t", "egress.receipt", **once)  # type: ignore[arg-type]
    again = append_once(LocalStore(tmp_path), "t", "egress.receipt", **once)
    assert again == first
    assert Ledger(LocalStore(tmp_path), "t").head() == 1


@pytest.mark.parametrize("size", [256, 257, 600])
def test_sequencer_large_batches_cross_tile_boundaries(tmp_path: Path, size: int) -> None:
    """One writer's burst across full tiles and bundles: tiles match the events exactly."""
    store = LocalStore(tmp_path)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda w: _write(store, f"b{w}", size // 16), range(16)))
    _assert_one_log(store, 16, size // 16)


def test_sequencer_entries_are_the_events_canonical_json(tmp_path: Path) -> None:
    """The fast serialisation is exactly RFC 8785's for what events hold; a float or a
    non-ASCII name takes the canonical writer. Each stored entry re-serialises to itself."""
    from custody.canonical import canonical_json

    ledger = Ledger(LocalStore(tmp_path), "t")
    details: list[dict[str, object]] = [
        {"attempt": 1, "step": "3", "ok": True, "none": None},
        {"ratio": 0.1, "big": 1e21, "tiny": 5e-7},
        {"name": "Zoë ✓", "list": ["b", "a"], "neg": -(2**53)},
        {"ünïcode": "x"},
    ]
    for detail in details:
        ledger.append("staged", sha256=DOCS[0], detail=detail)  # type: ignore[arg-type]
    for seq in range(1, len(details) + 1):
        event = ledger.get(seq)
        assert ledger.entry(seq) == canonical_json(event)
        assert event.hash == event.body_hash()


class _CountingReads(LocalStore):
    """The real local store, counting the batch objects read back whole (nothing faked)."""

    batch_reads = 0

    def get(self, key: str) -> bytes:
        data = super().get(key)
        self.batch_reads += "/batch/" in key
        return data


def test_sequencer_integrates_its_own_batches_without_reading_them_back(tmp_path: Path) -> None:
    """Batches this process created are integrated from memory (the store holds exactly
    them); one another process made (another store object, whose integration failed) is
    read from the store."""
    store = _CountingReads(tmp_path)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda w: _write(store, f"m{w}", 10), range(4)))
    Ledger(store, "t").flush()
    assert store.batch_reads == 0
    other = _NoTiles(LocalStore(tmp_path))
    Ledger(other, "t").append("staged", sha256=DOCS[0], actor="elsewhere")  # type: ignore[arg-type]
    Ledger(store, "t").flush()
    assert store.batch_reads == 1
    _assert_one_log(store, 1, 41)
