"""``custody bench ledger``: the audit ledger at volume, on the project's own code.

One tenant's log grows to ``--events N`` through ``Ledger.append`` from
``--writers K`` threads (documents of seven events each, every event indexed by
document), with the notary signing each integration and a witness server on
loopback cosigning it, as in production. At N/1000, N/100, N/10 and N it
measures, on a fresh store object (nothing cached):

    append_events_per_s   events acknowledged per second while growing to that size
    objects_per_event     store writes (creates, puts, deletes) per event meanwhile
    proof_reads           store reads to prove one document: its events found through
                          the index, each proven in the witnessed checkpoint (custody verify's
                          ``ledger.inclusion`` and ``ledger.witness``)
    proof_s               the seconds that took
    audit_incremental_s   ``custody audit verify --state-file`` over the last 1% of entries

and ``growth`` = proof_s(N) / proof_s(N/10). ``--store s3`` runs on moto's S3
server, behind a proxy delaying every request by ``--s3-latency-ms``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from custody.ledger import tlog
from custody.ledger.checkpoints import Notary, log_vkey, note_keys
from custody.ledger.cosign import parse_vkey
from custody.ledger.events import Ledger
from custody.ledger.signing import PublicKeyRecord, Signer, rotate
from custody.ledger.witness import WitnessClient, WitnessPolicy
from custody.settings import Settings
from custody.stores import ObjectStore
from starter.bench.ledger_store import Counting, s3_store
from starter.cli.output import Exit
from starter.evidence.verify.heads import Head, stored_note
from starter.evidence.verify.incremental import Verified, kept, verify_since
from starter.evidence.verify.proofs import LogProofs
from starter.witness.server import make_server
from starter.witness.state import WitnessState

TENANT = "bench"
KINDS = ("staged", "validated", "recognised", "checked", "published", "exported", "read")


def run(args: argparse.Namespace, settings: Settings) -> int:
    started = time.perf_counter()
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="custody-ledger-")))
        store, raw = stack.enter_context(_stores(args, scratch))
        report = _bench(args, scratch, store, raw)
        report["wall_s"] = round(time.perf_counter() - started, 1)  # before the clean-up
        print(json.dumps(report, indent=2) if args.json else _text(report), flush=True)
    return Exit.OK


@contextmanager
def _stores(args: argparse.Namespace, scratch: Path) -> Iterator[tuple[Counting, Any]]:
    if args.store == "s3":
        with s3_store(args.s3_latency_ms) as raw:
            yield Counting(raw), raw
        return
    from custody.stores.local import LocalStore

    raw = LocalStore(scratch / "objects")
    yield Counting(raw), raw


def _bench(args: argparse.Namespace, scratch: Path, store: Counting, raw: Any) -> dict[str, Any]:
    signer = rotate(scratch / "signing")
    with _witness(scratch / "witness-state", signer) as client:
        policy = WitnessPolicy({client.name: client.key}, 1, (client,))
        notary = Notary(signer, cosigners=[client])
        keys = {signer.kid: signer.public_record()}
        marks = sorted({max(1, args.events // d) for d in (1000, 100, 10, 1)})
        sizes, done = [], 0
        for mark in marks:
            before, t0 = store.writes, time.perf_counter()
            _grow(store, notary, done, mark, args.writers)
            rate = (mark - done) / (time.perf_counter() - t0)
            per_event = (store.writes - before) / (mark - done)
            done = mark
            sizes.append(
                {
                    "events": mark,
                    "append_events_per_s": round(rate, 1),
                    "objects_per_event": round(per_event, 3),
                    **_prove(raw, keys, policy, mark),
                    "audit_incremental_s": _audit(raw, keys, policy, mark),
                }
            )
    growth = sizes[-1]["proof_s"] / max(sizes[-2]["proof_s"], 1e-9) if len(sizes) > 1 else 1.0
    return {
        "events": args.events,
        "writers": args.writers,
        "store": args.store,
        "s3_latency_ms": args.s3_latency_ms if args.store == "s3" else None,
        "sizes": sizes,
        "growth": round(growth, 3),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


@contextmanager
def _witness(directory: Path, signer: Signer) -> Iterator[WitnessClient]:
    """The witness, in this process but in a directory of its own, on loopback."""
    state = WitnessState(directory)
    state.trust(log_vkey(signer))
    server = make_server(state, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    name, _, key = parse_vkey(state.vkey)
    try:
        yield WitnessClient(f"http://127.0.0.1:{server.server_address[1]}", name, key)
    finally:
        server.shutdown()
        server.server_close()


def _grow(store: ObjectStore, notary: Notary, start: int, end: int, writers: int) -> None:
    """Events ``start + 1`` .. ``end``, taken in turn by ``writers`` threads; then flushed."""
    tickets = iter(range(start, end))
    lock = threading.Lock()

    def write() -> None:
        ledger = Ledger(store, TENANT, notary)
        while True:
            with lock:
                n = next(tickets, None)
            if n is None:
                return
            doc, step = divmod(n, len(KINDS))
            ledger.append(KINDS[step], sha256=f"{doc:064x}", actor="bench", detail={"n": n})

    with ThreadPoolExecutor(writers) as pool:
        for future in [pool.submit(write) for _ in range(writers)]:
            future.result()
    Ledger(store, TENANT, notary).flush()


def _prove(
    raw: Any, keys: dict[str, PublicKeyRecord], policy: WitnessPolicy, size: int
) -> dict[str, Any]:
    """``custody verify``'s ledger part for one document in the middle of the log."""
    store = Counting(raw)
    doc = f"{size // len(KINDS) // 2:064x}"
    t0 = time.perf_counter()
    ledger = Ledger(store, TENANT)
    seqs = {e.seq for e in ledger.for_document(doc)}
    checks = LogProofs(policy=policy).checks(ledger, seqs, keys)
    took = time.perf_counter() - t0
    if not all(c.ok for c in checks) or not seqs:
        raise RuntimeError(f"the bench's own proof failed: {checks}")
    return {"proof_reads": store.reads, "proof_s": round(took, 4)}


def _audit(raw: Any, keys: dict[str, PublicKeyRecord], policy: WitnessPolicy, size: int) -> float:
    """The incremental audit from the checkpoint nearest below 99% of the log."""
    ledger = Ledger(raw, TENANT)
    below = [s for s in ledger.checkpoint_sizes() if s <= size * 0.99] or [0]
    last = _verified(ledger, keys, max(below))
    t0 = time.perf_counter()
    report, _ = verify_since(raw, TENANT, keys, last, policy=policy)
    took = time.perf_counter() - t0
    if not report.ok:
        raise RuntimeError(f"the bench's own audit failed: {report}")
    return round(took, 4)


def _verified(ledger: Ledger, keys: dict[str, PublicKeyRecord], size: int) -> Verified:
    """What an auditor's state file would hold after verifying the checkpoint of ``size``."""
    if size == 0:
        return Verified(size=0, root=base64.b64encode(tlog.EMPTY_ROOT).decode())
    signed = stored_note(ledger, size) or b""
    note = tlog.open_note(signed, note_keys(keys))
    if note is None:
        raise RuntimeError(f"checkpoint {size} unreadable")
    return kept(Head(note, signed, "checkpoint"))


def _text(report: dict[str, Any]) -> str:
    rows = [
        f"{s['events']:>9}  {s['append_events_per_s']:>8.1f}/s  {s['objects_per_event']:>6.3f} obj"
        f"  {s['proof_reads']:>4} reads  {s['proof_s']:.3f}s  audit {s['audit_incremental_s']:.3f}s"
        for s in report["sizes"]
    ]
    return "\n".join([*rows, f"growth {report['growth']}  wall {report['wall_s']}s"])
