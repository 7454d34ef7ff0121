"""``custody audit verify --full``: one tenant's whole log replayed against its tiles,
checkpoints and witnesses.

Named checks, each of which FAILs on its own:

    ledger.chain    every event present, unaltered, in its place, following the one before
                    (and, for a log migrated from before tiles, equal to its old copy)
    ledger.tiles    every stored hash tile and entry bundle is what the events make
    ledger.tree     every stored checkpoint signed by a trusted key, for this log, within
                    the log's size, and naming the Merkle tree head of that many events
    ledger.witness  the newest checkpoint cosigned by the witness quorum; what each witness
                    last cosigned still in the log with its root; every archived note too
                    (starter.evidence.verify.heads), so truncation, and a rewrite grown past
                    the old head, show
    ledger.batches  the sequenced batches hold exactly the events integrated from them
    ledger.index    every by-document index entry names its own event, and every event
                    of a document since ``index-from`` has its entry
    ledger.versions (a versioned S3 bucket only) nothing of the log created once has a
                    second version or a delete marker (starter.evidence.verify.versions)
    state_head      (the system log, ``_system``, only) for every state prefix the log
                    names, the store's newest version is the log's newest: not older
                    (deleted or rolled back) and not different. A store one version
                    ahead is a writer that died before logging (custody.state.anchor):
                    counted, not failed

The incremental audit (``--state-file``) is ``starter.evidence.verify.incremental``.
Keys are trusted only as the caller passes them: ``starter.evidence.trust`` picks the
pinned ones, never merely whatever the store publishes. A tenant whose log
cannot be read is reported with ``ledger.readable`` and never stops the others.
"""

from __future__ import annotations

from custody import ids
from custody.ledger import tlog
from custody.ledger.checkpoints import note_keys
from custody.ledger.edge import Edge
from custody.ledger.events import Event, Ledger, prefix
from custody.ledger.signing import PublicKeyRecord
from custody.ledger.witness import WitnessPolicy
from custody.state import versions
from custody.state.anchor import Logged, as_logged
from custody.stores import ObjectMissing, ObjectStore
from custody.stores.system import SYSTEM_SCOPE
from starter.evidence.verify.heads import Trusted, newest_head, stored_note
from starter.evidence.verify.ledger import event_problems
from starter.evidence.verify.logparts import (
    batches_check,
    tiles_problems,
    witness_check,
)
from starter.evidence.verify.report import Check, Report, checked
from starter.evidence.verify.versions import ledger_versions_check

_SHOWN = 5  # problems named per check; the count says how many more


def verify_log(
    store: ObjectStore,
    tenant: str | None,
    keys: dict[str, PublicKeyRecord],
    witness: ObjectStore | None = None,
    policy: WitnessPolicy | None = None,
) -> Report:
    subject = f"ledger/{ids.scope(tenant)}"
    try:
        ledger = Ledger(store, tenant)
        entries, events, problems = read_chain(ledger)
        trusted = note_keys(keys)
        leaves = [tlog.leaf_hash(e if e is not None else b"") for e in entries]
        checks = [
            check("ledger.chain", problems, f"{len(entries)} events"),
            _tiles_check(ledger, entries),
            _tree_check(ledger, heads(leaves), trusted),
            witness_check(ledger, trusted, policy, witness, newest_head(ledger, trusted, policy)),
            batches_check(ledger, entries),
            index_check(ledger, events),
        ]
        if (versions := ledger_versions_check(store, tenant)) is not None:
            checks.append(versions)
        if tenant == SYSTEM_SCOPE:
            checks.append(_state_head_check(store, events))
    except Exception as exc:  # one tenant's unreadable log is its FAIL, not everyone's abort
        checks = [Check(name="ledger.readable", ok=False, detail=type(exc).__name__)]
    return Report(subject=subject, ok=all(c.ok for c in checks), checks=checks)


def check(name: str, problems: list[str], summary: str = "") -> Check:
    more = f" (+{len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
    return Check(name=name, ok=not problems, detail="; ".join(problems[:_SHOWN]) + more or summary)


def read_chain(
    ledger: Ledger, start: int = 1, prev: Event | None = None
) -> tuple[list[bytes | None], dict[int, Event], list[str]]:
    """Entries ``start``..head (None: unreadable), events by seq, and what is wrong with
    the chain; ``prev``: the event before ``start``, already verified."""
    entries: list[bytes | None] = []
    events: dict[int, Event] = {}
    problems: list[str] = []
    for seq in range(start, ledger.head() + 1):
        try:
            entry = ledger.entry(seq)
            event = Event.model_validate_json(entry)
        except ObjectMissing:
            entries.append(None)
            problems.append(f"event {seq} missing")
            continue
        except Exception:  # altered ciphertext or bytes that no longer parse
            entries.append(None)
            problems.append(f"event {seq} altered (unreadable)")
            continue
        entries.append(entry)
        events[seq] = event
        before = events.get(seq - 1, prev if seq == start else None)
        problems += event_problems(seq, event, before)
    return entries, events, problems


def heads(leaves: list[bytes]) -> list[bytes]:
    """The tree head of every prefix: heads[n] is the head of the first n leaves."""
    found: list[bytes] = [tlog.EMPTY_ROOT]
    frontier: list[bytes] = []
    for size, leaf in enumerate(leaves):
        frontier = tlog.frontier_push(frontier, size, leaf)
        found.append(tlog.frontier_root(frontier))
    return found


def _tiles_check(ledger: Ledger, entries: list[bytes | None]) -> Check:
    """The stored tiles against those the events make (and old copies, once migrated)."""
    if ledger.is_legacy():
        return Check(name="ledger.tiles", ok=True, detail="a log from before tiles (not migrated)")
    size = ledger.size()
    made = Edge(ledger.prefix).extend([e if e is not None else b"" for e in entries[:size]])
    problems = tiles_problems(ledger, made.create)
    problems += _old_copy_problems(ledger, entries)
    return check("ledger.tiles", problems, f"{len(made.create)} tiles and bundles")


def _old_copy_problems(ledger: Ledger, entries: list[bytes | None]) -> list[str]:
    """A migrated log's old event objects must still equal its leaves."""
    problems = []
    for seq in ledger.legacy.sequence_numbers():
        try:
            old = ledger.legacy.entry(seq)
        except (ObjectMissing, ValueError):
            continue  # an old copy gone is no contradiction: the tiles hold the event
        if seq > len(entries) or entries[seq - 1] != old:
            problems.append(f"event {seq} differs from its copy before tiles")
    return problems


def _tree_check(ledger: Ledger, roots: list[bytes], trusted: Trusted) -> Check:
    problems, sizes = [], ledger.checkpoint_sizes()
    for size in sizes:
        signed = stored_note(ledger, size)
        if signed is None:
            problems.append(f"checkpoint {size} unreadable")
            continue
        problems += _note_problems(f"checkpoint {size}", signed, ledger.tenant, roots, trusted)
        if (note := tlog.open_note(signed, trusted)) is not None and note.size != size:
            problems.append(f"checkpoint {size} holds tree size {note.size} (moved)")
    newest = ledger.newest_checkpoint()
    if newest is not None:
        problems += _note_problems("the newest checkpoint", newest, ledger.tenant, roots, trusted)
    summary = f"{len(sizes)} checkpoints, newest {max(sizes, default=0)}"
    return check("ledger.tree", problems, summary)


def _note_problems(
    what: str, signed: bytes, tenant: str | None, roots: list[bytes], trusted: Trusted
) -> list[str]:
    """Why a signed checkpoint does not hold for a log whose prefix heads are ``roots``."""
    note = tlog.open_note(signed, trusted)
    size = len(roots) - 1
    if note is None:
        return [f"{what} not signed by a trusted key"]
    if note.origin != f"custody.ledger/{ids.scope(tenant)}":
        return [f"{what} is another log's ({note.origin})"]
    if note.size > size:
        return [f"{what} covers {note.size} events, the log has {size} (truncated)"]
    if roots[note.size] != note.root:
        return [f"{what} disagrees with the log (rewritten)"]
    return []


def index_check(ledger: Ledger, events: dict[int, Event]) -> Check:
    """The by-document index names exactly the documents' events: never a silent fallback."""
    folder = f"{prefix(ledger.tenant)}by-doc/"
    start = ledger.indexed_from()
    problems, seen = [], set()
    markers = list(ledger.store.list(folder)) + ledger.pending_markers(folder)
    if markers and start is None:
        problems.append("index-from missing or unreadable")
    for key in dict.fromkeys(markers):
        sha256, _, name = key[len(folder) :].partition("/")
        if not name.isdigit():
            problems.append(f"index entry {key[len(folder) :]} malformed")
            continue
        seen.add((sha256, int(name)))
        problems += _marker_problems(ledger, key, sha256, int(name), events.get(int(name)))
    for seq, event in sorted(events.items()):
        late = start is not None and seq >= start
        if late and event.sha256 is not None and (event.sha256, seq) not in seen:
            problems.append(f"event {seq} missing from the index")
    return check("ledger.index", problems, f"{len(markers)} entries")


def _marker_problems(
    ledger: Ledger, key: str, sha256: str, seq: int, event: Event | None
) -> list[str]:
    if event is None or event.sha256 != sha256:
        return [f"index entry {seq} names another document's event"]
    if seq > ledger.size():
        return []  # a batch not integrated yet: its entries are made with it
    try:
        body = ledger.store.get(key)
    except Exception:
        return [f"index entry {seq} unreadable"]
    return [f"index entry {seq} altered"] if body else []  # its name is its whole meaning


def _state_head_check(store: ObjectStore, events: dict[int, Event]) -> Check:
    """Each logged state prefix's newest version against the store's newest, one by one."""
    newest: dict[str, Logged] = {}
    for event in events.values():
        if (opened := as_logged(event)) is not None:
            prefix_, logged = opened
            if prefix_ not in newest or newest[prefix_].n < logged.n:
                newest[prefix_] = logged
    problems, ahead = [], 0
    for prefix_, logged in sorted(newest.items()):
        n, sha256 = versions.stored_head(store, prefix_)
        if n < logged.n:
            problems.append(f"{prefix_}: log holds version {logged.n}, store {n} (rolled back)")
        elif n == logged.n and sha256 != logged.sha256:
            problems.append(f"{prefix_}: version {n} is not the logged one")
        ahead += n > logged.n
    unlogged = f", {ahead} ahead of the log (not yet logged)" if ahead else ""
    return checked("state_head", problems, f"{len(newest)} state prefixes match{unlogged}")


def witnessed_scopes(witness: ObjectStore | None) -> set[str | None]:
    """Tenants the note archive has seen: a ledger deleted whole from the store still shows."""
    if witness is None:
        return set()
    found = {key.split("/")[1] for key in witness.list("ledger/")}
    return {None if s == "_" else s for s in found}
