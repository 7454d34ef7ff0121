"""State versions anchored in the transparency log, so a deleted newest version shows.

A state version chain (custody.state.versions) proves every version it holds, but not
that it holds them all: delete the newest version and what is left is still a
consistent chain, which a process that never read the newer one accepts. So
every version is also an event of the system's own log, ``ledger/_system/``
(custody.ledger: sealed under the system key, checkpointed, witnessed):

    kind "state_version", sha256 = key_id(prefix),
    detail {"state": prefix, "n": N, "version": sha256 of version N's stored bytes}

The event carries the state's key prefix, its number and a hash; never the
state itself. A reader refuses (``STATE_INVALID``) a store whose newest version
is older than one the log knows, or whose version N is not the logged N.

Write ordering: the version object is created first, then the event is
appended. A crash between the two leaves a version the log does not know: the
store is *newer* than the log, its chain still signed and whole, and that is
tolerated (a ``state_unlogged`` warning); the next writer of that prefix logs
it before its own version. The other order would let a crash leave the log
ahead of the store, which is exactly what a deletion looks like. The writer
signed the version, so it holds the checkpoint key too: without a notary of
its own (a CLI change) it checkpoints and witnesses the system log itself.

Finding the newest logged version cheaply: the event's ``sha256`` field holds
``key_id(prefix)``, so the ledger's own by-document index
(``ledger/_system/by-doc/<key_id>/<seq>``) is a per-prefix index of its events,
written before each event and checked complete by ``custody audit verify``
(``ledger.index``). A read lists that one folder and opens its newest few
events: no scan of the log, and no mutable head pointer. A head pointer would
be rewritten on every change, so it could not sit under the ledger's
create-only retention, and an insider could roll it back along with the
version; the index entries are create-only. Deleting an entry together with
the version still fools a fresh reader, but not ``audit verify``: its
``ledger.index`` check names the missing entry and ``state_head`` compares
every prefix's newest logged version with the store, from the whole log.

With a witness configured (``StateKeys.witness``), a reader also checks that the system log still
holds the newest witnessed checkpoint (signed by a trusted key): its size, and
the same root from the tiles, so deleting the log's tail with the version and
its entry shows, and so does rewriting what lies below it. The
witness is listed at most every ``_WITNESS_TTL_S`` seconds per process, since
tenant authentication reads state on every request.

Events are not signed one by one, so an insider can append a false
``state_version`` event: that can only make readers refuse, which deleting
the version object achieves too; it never makes them accept a rolled-back state.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody.errors import StateInvalid, StoreError
from custody.ledger import tlog
from custody.ledger.checkpoints import Notary, key_name, origin, witness_key
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signer
from custody.stores import ObjectMissing, ObjectStore
from custody.stores.system import SYSTEM_SCOPE

KIND = "state_version"
#: Events of one prefix read per check: racing writers may log a version twice,
#: out of order, so the newest entry is not always the highest number.
_LOOK = 4
_WITNESS_TTL_S = 30.0
#: Per witness (by repr), when it was last listed and the (size, root) it vouched for.
_WITNESSED: dict[str, tuple[float, tuple[int, bytes]]] = {}


@dataclass(frozen=True)
class Logged:
    """One prefix's version as the log records it."""

    seq: int
    n: int
    sha256: str


def key_id(prefix: str) -> str:
    """The prefix's name in the log's index: a path-safe hash of it."""
    return hashlib.sha256(prefix.encode()).hexdigest()


def state_log(store: ObjectStore) -> Ledger:
    return Ledger(store, SYSTEM_SCOPE)


def log_version(
    store: ObjectStore,
    prefix: str,
    n: int,
    sha256: str,
    signer: Signer | None = None,
    witness: ObjectStore | None = None,
) -> None:
    """Append version ``n`` of ``prefix`` (its stored bytes' hash) to the system log.

    The writer signed the version, so it holds the key that signs checkpoints:
    where the process has no notary (a CLI change), it checkpoints and
    witnesses the log itself, so the newest version is pinned at once.
    """
    detail: dict[str, str | int | float | bool | list[str] | None] = {
        "state": prefix,
        "n": n,
        "version": sha256,
    }
    ledger = state_log(store)
    if ledger.notary is None and signer is not None:
        ledger.notary = Notary(signer, witness)
    ledger.append(KIND, sha256=key_id(prefix), detail=detail)


def as_logged(event: Event) -> tuple[str, Logged] | None:
    """The (prefix, version) a ``state_version`` event records; None for anything else."""
    prefix, n, sha = (event.detail.get(k) for k in ("state", "n", "version"))
    if event.kind != KIND or not isinstance(prefix, str) or event.sha256 != key_id(prefix):
        return None
    if isinstance(n, bool) or not isinstance(n, int) or not isinstance(sha, str):
        return None
    return prefix, Logged(event.seq, n, sha)


def _newest_logged(store: ObjectStore, prefix: str) -> Logged | None:
    """The highest version of ``prefix`` among its newest index entries' events."""
    ledger = state_log(store)
    seqs = sorted(ledger.indexed_seqs(key_id(prefix)), reverse=True)
    found = []
    for seq in seqs[:_LOOK]:
        event = ledger.find(seq)  # an entry whose append lost its race names no event
        opened = as_logged(event) if event is not None else None
        if opened is not None and opened[0] == prefix:
            found.append(opened[1])
    return max(found, key=lambda logged: logged.n, default=None)


def _witnessed(witness: ObjectStore, trusted: Mapping[str, Ed25519PublicKey]) -> tuple[int, bytes]:
    """The system log's newest witnessed checkpoint a trusted key signed: (size, root);
    (0, b"") when there is none."""
    cached = _WITNESSED.get(repr(witness))
    if cached is not None and time.monotonic() - cached[0] < _WITNESS_TTL_S:
        return cached[1]
    folder = witness_key(SYSTEM_SCOPE, 0).rpartition("/")[0] + "/"
    notes = {key_name(kid): key for kid, key in trusted.items()}
    found: tuple[int, bytes] = (0, b"")
    for name in sorted(witness.list(folder), reverse=True):  # zero-padded: newest first
        note = tlog.open_note(witness.get(name), notes) if name.endswith(".note") else None
        if note is not None and note.origin == origin(SYSTEM_SCOPE):
            found = (note.size, note.root)
            break
    _WITNESSED[repr(witness)] = (time.monotonic(), found)
    return found


def _root(log: Ledger, size: int) -> bytes | None:
    try:
        return log.tree().root(size)
    except (ObjectMissing, StoreError, ValueError):
        return None  # tiles gone or altered: not the witnessed log


def check(
    store: ObjectStore,
    prefix: str,
    n: int,
    sha256: str | None,
    witness: tuple[ObjectStore, Mapping[str, Ed25519PublicKey]] | None = None,
) -> Logged | None:
    """Refuse a store whose newest version (``n``, 0: none) is behind or unlike the log's.

    Returns the newest logged version (None: never logged); one older than
    ``n`` is a crash between write and log, which the caller tolerates.
    ``witness``: the witness store and the keys trusted to sign its notes.
    """
    size, root = _witnessed(*witness) if witness is not None else (0, b"")
    log = state_log(store)
    if size and log.size() < size:
        raise StateInvalid(detail=f"the state log is shorter than its witnessed size {size}")
    if size and _root(log, size) != root:  # O(log n) tiles
        raise StateInvalid(detail=f"the state log differs from its witnessed checkpoint {size}")
    logged = _newest_logged(store, prefix)
    if logged is None:
        return None
    if logged.n > n:
        raise StateInvalid(
            detail=f"{prefix}: the log holds version {logged.n} (event {logged.seq}),"
            f" the store only {n}: deleted or rolled back"
        )
    if logged.n == n and logged.sha256 != sha256:
        raise StateInvalid(detail=f"{prefix}: version {n} is not the one the log holds")
    return logged
