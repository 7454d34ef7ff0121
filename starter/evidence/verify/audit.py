"""``custody audit verify``: one tenant's log replayed against its checkpoints and the witness.

Four named checks, each of which FAILs on its own:

    ledger.chain    every event present, unaltered, in its place, following the one before
    ledger.tree     every stored checkpoint signed by a trusted key, for this log, within
                    the log's size, and naming the Merkle tree head of that many events
    ledger.witness  the newest checkpoint the witness holds: trusted, not beyond the log,
                    and the log consistent with it (an RFC 9162 consistency proof), so a
                    truncation or a rewritten history shows even with the store's
                    checkpoints gone
    ledger.index    every by-document index entry names its own event, and every event
                    of a document since ``index-from`` has its entry
    state_head      (the system log, ``_system``, only) for every state prefix the log
                    names, the store's newest version is the log's newest: not older
                    (deleted or rolled back) and not different. A store one version
                    ahead is a writer that died before logging (custody.state.anchor):
                    counted, not failed

Keys are trusted only as the caller passes them: ``starter.evidence.trust`` picks the
pinned ones, never merely whatever the store publishes. A tenant whose log
cannot be read is reported with ``ledger.readable`` and never stops the others.
"""

from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody import ids
from custody.ledger import tlog
from custody.ledger.checkpoints import note_keys, origin, witnessed
from custody.ledger.events import Event, Ledger, prefix
from custody.ledger.signing import PublicKeyRecord
from custody.state import versions
from custody.state.anchor import Logged, as_logged
from custody.stores import ObjectMissing, ObjectStore
from custody.stores.system import SYSTEM_SCOPE
from starter.evidence.verify.ledger import event_problems
from starter.evidence.verify.report import Check, Report

_SHOWN = 5  # problems named per check; the count says how many more


def verify_log(
    store: ObjectStore,
    tenant: str | None,
    keys: dict[str, PublicKeyRecord],
    witness: ObjectStore | None = None,
) -> Report:
    subject = f"ledger/{ids.scope(tenant)}"
    try:
        ledger = Ledger(store, tenant)
        events, leaves, problems = _read_chain(ledger)
        trusted = note_keys(keys)
        checks = [
            _check("ledger.chain", problems, f"{len(leaves)} events"),
            _tree_check(ledger, leaves, trusted),
            _witness_check(witness, tenant, leaves, trusted),
            index_check(ledger, events),
        ]
        if tenant == SYSTEM_SCOPE:
            checks.append(_state_head_check(store, events))
    except Exception as exc:  # one tenant's unreadable log is its FAIL, not everyone's abort
        checks = [Check(name="ledger.readable", ok=False, detail=type(exc).__name__)]
    return Report(subject=subject, ok=all(c.ok for c in checks), checks=checks)


def _check(name: str, problems: list[str], summary: str = "") -> Check:
    more = f" (+{len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
    return Check(name=name, ok=not problems, detail="; ".join(problems[:_SHOWN]) + more or summary)


def _read_chain(ledger: Ledger) -> tuple[dict[int, Event], list[bytes], list[str]]:
    """Events by seq, the Merkle leaves of seq 1..head, and what is wrong with the chain."""
    seqs = ledger.sequence_numbers()
    events: dict[int, Event] = {}
    leaves: list[bytes] = []
    problems: list[str] = []
    for seq in range(1, max(seqs, default=0) + 1):
        try:
            entry = ledger.entry(seq)
            event = Event.model_validate_json(entry)
        except ObjectMissing:
            problems.append(f"event {seq} missing")
            leaves.append(tlog.leaf_hash(b""))  # holds its place, so checkpoints disagree
            continue
        except Exception:  # altered ciphertext or bytes that no longer parse
            problems.append(f"event {seq} altered (unreadable)")
            leaves.append(tlog.leaf_hash(b""))
            continue
        leaves.append(tlog.leaf_hash(entry))
        events[seq] = event
        problems += event_problems(seq, event, events.get(seq - 1))
    return events, leaves, problems


def heads(leaves: list[bytes]) -> list[bytes]:
    """The tree head of every prefix: heads[n] is the head of the first n leaves."""
    found: list[bytes] = [tlog.EMPTY_ROOT]
    frontier: list[bytes] = []
    for size, leaf in enumerate(leaves):
        frontier = tlog.frontier_push(frontier, size, leaf)
        found.append(tlog.frontier_root(frontier))
    return found


def _tree_check(ledger: Ledger, leaves: list[bytes], trusted: dict[str, Ed25519PublicKey]) -> Check:
    roots, problems = heads(leaves), []
    sizes = ledger.checkpoint_sizes()
    for size in sizes:
        try:
            signed = json.loads(ledger.stored_checkpoint(size))["note"].encode()
        except Exception:
            problems.append(f"checkpoint {size} unreadable")
            continue
        problems += _note_problems(f"checkpoint {size}", signed, ledger.tenant, roots, trusted)
        if (note := tlog.open_note(signed, trusted)) is not None and note.size != size:
            problems.append(f"checkpoint {size} holds tree size {note.size} (moved)")
    newest = max(sizes, default=0)
    return _check("ledger.tree", problems, f"{len(sizes)} checkpoints, newest {newest}")


def _note_problems(
    what: str,
    signed: bytes,
    tenant: str | None,
    roots: list[bytes],
    trusted: dict[str, Ed25519PublicKey],
) -> list[str]:
    """Why a signed checkpoint does not hold for a log whose prefix heads are ``roots``."""
    note = tlog.open_note(signed, trusted)
    size = len(roots) - 1
    if note is None:
        return [f"{what} not signed by a trusted key"]
    if note.origin != origin(tenant):
        return [f"{what} is another log's ({note.origin})"]
    if note.size > size:
        return [f"{what} covers {note.size} events, the log has {size} (truncated)"]
    if roots[note.size] != note.root:
        return [f"{what} disagrees with the log (rewritten)"]
    return []


def _witness_check(
    witness: ObjectStore | None,
    tenant: str | None,
    leaves: list[bytes],
    trusted: dict[str, Ed25519PublicKey],
) -> Check:
    """The log against the largest checkpoint the witness holds: not shorter, and an extension."""
    if witness is None:
        return Check(name="ledger.witness", ok=True, detail="no witness configured")
    notes = [(tlog.open_note(n, trusted), n) for n in witnessed(witness, tenant)]
    untrusted = sum(note is None for note, _ in notes)
    problems = [f"witness holds {untrusted} notes no trusted key signed"] if untrusted else []
    opened = sorted((note.size, signed) for note, signed in notes if note is not None)
    if not opened:
        problems += ["no witnessed checkpoint"] if leaves else []
        return _check("ledger.witness", problems, "nothing witnessed yet")
    size, signed = opened[-1]
    roots = heads(leaves)
    problems += _note_problems(f"witnessed checkpoint {size}", signed, tenant, roots, trusted)
    if not problems:
        old = roots[size]
        proof = tlog.consistency_proof(leaves, size)
        if not tlog.verify_consistency(size, len(leaves), old, roots[-1], proof):
            problems.append(f"log is not consistent with witnessed checkpoint {size}")
    return _check("ledger.witness", problems, f"consistent with witnessed size {size}")


def index_check(ledger: Ledger, events: dict[int, Event]) -> Check:
    """The by-document index names exactly the documents' events: never a silent fallback."""
    folder = f"{prefix(ledger.tenant)}by-doc/"
    start = ledger.indexed_from()
    problems, seen = [], set()
    markers = list(ledger.store.list(folder))
    if markers and start is None:
        problems.append("index-from missing or unreadable")
    for key in markers:
        sha256, _, name = key[len(folder) :].partition("/")
        if not name.isdigit():
            problems.append(f"index entry {key[len(folder) :]} malformed")
            continue
        seq = int(name)
        seen.add((sha256, seq))
        problems += _marker_problems(ledger, key, sha256, seq, events.get(seq))
    for seq, event in sorted(events.items()):
        late = start is not None and seq >= start
        if late and event.sha256 is not None and (event.sha256, seq) not in seen:
            problems.append(f"event {seq} missing from the index")
    return _check("ledger.index", problems, f"{len(markers)} entries")


def _state_head_check(store: ObjectStore, events: dict[int, Event]) -> Check:
    """Each logged state prefix's newest version against the store's newest, one by one."""
    newest: dict[str, Logged] = {}
    for event in events.values():
        if (opened := as_logged(event)) is not None:
            prefix, logged = opened
            if prefix not in newest or newest[prefix].n < logged.n:
                newest[prefix] = logged
    problems, ahead = [], 0
    for prefix, logged in sorted(newest.items()):
        n, sha256 = versions.stored_head(store, prefix)
        if n < logged.n:
            problems.append(f"{prefix}: log holds version {logged.n}, store {n} (rolled back)")
        elif n == logged.n and sha256 != logged.sha256:
            problems.append(f"{prefix}: version {n} is not the logged one")
        ahead += n > logged.n
    unlogged = f", {ahead} ahead of the log (not yet logged)" if ahead else ""
    return _check("state_head", problems, f"{len(newest)} state prefixes match{unlogged}")


def _marker_problems(
    ledger: Ledger, key: str, sha256: str, seq: int, event: Event | None
) -> list[str]:
    try:
        body = ledger.store.get(key)
    except Exception:
        return [f"index entry {seq} unreadable"]
    if body:  # an entry is empty: its name is its whole meaning
        return [f"index entry {seq} altered"]
    if event is None or event.sha256 != sha256:
        return [f"index entry {seq} names another document's event"]
    return []


def witnessed_scopes(witness: ObjectStore | None) -> set[str | None]:
    """Tenants the witness has seen: a ledger deleted whole from the store still shows."""
    if witness is None:
        return set()
    found = {key.split("/")[1] for key in witness.list("ledger/")}
    return {None if s == "_" else s for s in found}
