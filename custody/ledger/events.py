"""The audit ledger: an append-only transparency log per tenant, in the object store.

Event N lives at ``ledger/<scope>/events/<N>.json``, holds the SHA-256 of event
N-1 (``prev``) and of its own canonical body (``hash``), and its stored bytes
are leaf N-1 of an RFC 9162 Merkle tree (custody.ledger.tlog). Appending is a
conditional create of the next sequence number: of two writers racing for N+1,
exactly one wins; the loser re-reads the head and appends after it. So writers
on many workers never fork the log, with no lock and no database.
``ledger/<scope>/head.json`` is only a hint for finding the end.

After each append, a process given a :class:`Notary` (custody.ledger.checkpoints)
signs the tree head as a C2SP checkpoint at ``ledger/<scope>/tlog/<N>.json``
and publishes it to a witness the workers cannot rewrite, so deleting the
newest events together with their checkpoints still shows (starter.evidence.verify.audit).

The ledger holds hashes, codes and ids, never document content, and is sealed
under the system's key-encryption key (scope ``_system``), not the tenant's: a
crypto-shredded tenant's audit trail stays readable and verifiable. Ledgers
sealed under the tenant's key before this still open with it.

Finding one document's events must not mean reading every event of the
tenant: before claiming N for a document's event, the appender creates the
empty marker ``ledger/<scope>/by-doc/<sha256>/<N>``; on losing the race to
another document's event it removes it again, so every entry names its own. Ledgers begun before
the index record where it starts (``index-from``); older events are scanned.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, Field

from custody import ids
from custody.canonical import canonical_json
from custody.stores import ObjectStore
from custody.stores.system import system_sealed

GENESIS = "0" * 64
_MAX_RACE = 1000
#: Per store object, the tenant scopes whose ``index-from`` this process has ensured.
_INDEXED: weakref.WeakKeyDictionary[ObjectStore, set[str | None]] = weakref.WeakKeyDictionary()


class Notary(Protocol):
    """Signs (and witnesses) the tree head after an append; custody.ledger.checkpoints has one."""

    def seal(self, ledger: Ledger, size: int) -> bytes: ...


#: Per store object, the notary that appenders without one of their own use.
_NOTARIES: weakref.WeakKeyDictionary[ObjectStore, Notary] = weakref.WeakKeyDictionary()


def notarize(store: ObjectStore, notary: Notary) -> None:
    """Make every later append through ``store`` in this process end with a checkpoint."""
    _NOTARIES[store] = notary


def _notary_of(store: ObjectStore) -> Notary | None:
    """The notary of ``store`` or of a store it wraps (an activity may add a wrapper)."""
    layer: ObjectStore | None = store
    while layer is not None:
        if (found := _NOTARIES.get(layer)) is not None:
            return found
        layer = getattr(layer, "inner", None)
    return None


class Event(BaseModel):
    seq: int
    prev: str
    at: datetime
    kind: str
    sha256: str | None = None
    code: str | None = None
    actor: str | None = None
    workflow_id: str | None = None
    run_id: str | None = None
    detail: dict[str, str | int | float | bool | list[str] | None] = Field(default_factory=dict)
    hash: str = ""

    def body_hash(self) -> str:
        return hashlib.sha256(
            canonical_json(self.model_dump(mode="json", exclude={"hash"}))
        ).hexdigest()


def prefix(tenant: str | None) -> str:
    return f"ledger/{ids.scope(tenant)}/"


def event_key(tenant: str | None, seq: int) -> str:
    return f"{prefix(tenant)}events/{seq:012d}.json"


def checkpoint_key(tenant: str | None, size: int) -> str:
    return f"{prefix(tenant)}tlog/{size:012d}.json"


def marker_key(tenant: str | None, sha256: str, seq: int) -> str:
    return f"{prefix(tenant)}by-doc/{sha256}/{seq:012d}"


class Ledger:
    def __init__(
        self, store: ObjectStore, tenant: str | None, notary: Notary | None = None
    ) -> None:
        self.raw = store
        self._store = system_sealed(store)
        self.tenant = tenant
        self.notary = notary or _notary_of(store)
        self._head_key = f"{prefix(tenant)}head.json"

    @property
    def store(self) -> ObjectStore:
        """The ledger's objects as stored (sealed under the system key, if sealing is on)."""
        return self._store

    def append(
        self, kind: str, *, markers: Callable[[int], list[str]] | None = None, **fields: object
    ) -> Event:
        """Append one event after the current head; safe against concurrent writers.

        ``markers(seq)`` names extra index objects to create before claiming
        ``seq``, as the by-document index is: an index written first can only
        over-point, never miss an event.
        """
        seq = self._hinted_head()
        sha256 = fields.get("sha256")
        for _ in range(_MAX_RACE):
            while self._store.exists(event_key(self.tenant, seq + 1)):
                seq += 1
            self._index_from(seq + 1)  # at the true head, so no older event is left out
            prev = self.get(seq).hash if seq > 0 else GENESIS
            event = Event(seq=seq + 1, prev=prev, at=datetime.now(UTC), kind=kind, **fields)  # type: ignore[arg-type]
            event = event.model_copy(update={"hash": event.body_hash()})
            if isinstance(sha256, str):
                self._store.create(marker_key(self.tenant, sha256, event.seq), b"")
            for marker in markers(event.seq) if markers else ():
                self._store.create(marker, b"")
            if self._store.create(event_key(self.tenant, event.seq), canonical_json(event)):
                self._store.put(self._head_key, str(event.seq).encode())
                if self.notary is not None:
                    self.notary.seal(self, event.seq)
                return event
            if isinstance(sha256, str):
                self._unmark(sha256, event.seq)
            seq += 1  # lost the race for this number; go after the winner
        raise RuntimeError("ledger append kept losing races")

    def seal(self, size: int) -> None:
        """Checkpoint the tree of ``size`` again, if this ledger has a notary.

        Safe to repeat (checkpoint and witness note are created only if absent):
        an append whose signing or witnessing failed is sealed by its retry.
        """
        if self.notary is not None:
            self.notary.seal(self, size)

    def _unmark(self, sha256: str, seq: int) -> None:
        """Remove our index entry for ``seq`` unless the winner's event is the same document's."""
        winner = self.find(seq)
        if winner is not None and winner.sha256 != sha256:
            self._store.delete(marker_key(self.tenant, sha256, seq))

    def _hinted_head(self) -> int:
        try:
            return int(self._store.get(self._head_key))
        except (KeyError, ValueError):
            return 0

    def entry(self, seq: int) -> bytes:
        """Event ``seq``'s stored bytes: leaf ``seq - 1`` of the Merkle tree."""
        return self._store.get(event_key(self.tenant, seq))

    def get(self, seq: int) -> Event:
        return Event.model_validate_json(self.entry(seq))

    def sequence_numbers(self) -> list[int]:
        events = f"{prefix(self.tenant)}events/"
        return [int(k[len(events) : -5]) for k in self._store.list(events)]

    def events(self) -> Iterator[Event]:
        for seq in self.sequence_numbers():
            yield self.get(seq)

    def for_document(self, sha256: str) -> list[Event]:
        """The document's events in order: from the index, plus a scan of what predates it."""
        start = self.indexed_from()
        found: dict[int, Event] = {}
        if start is None or start > 1:
            older = (s for s in self.sequence_numbers() if start is None or s < start)
            found.update((s, e) for s in older if (e := self.find(s)) is not None)
        if start is not None:
            for seq in self.indexed_seqs(sha256):
                if seq not in found and (event := self.find(seq)) is not None:
                    found[seq] = event
        return [found[s] for s in sorted(found) if found[s].sha256 == sha256]

    def find(self, seq: int) -> Event | None:
        """The event, or None when it is absent or no longer parses (verification reports it)."""
        try:
            return self.get(seq)
        except (KeyError, ValueError):
            return None

    def indexed_seqs(self, sha256: str) -> list[int]:
        """Sequence numbers the index names for this document (the audit checks them)."""
        folder = f"{prefix(self.tenant)}by-doc/{sha256}/"
        names = (key[len(folder) :] for key in self._store.list(folder))
        return [int(name) for name in names if name.isdigit()]

    def has(self, seq: int) -> bool:
        return self._store.exists(event_key(self.tenant, seq))

    def _index_from(self, seq: int) -> None:
        """Record, once, the first sequence number the by-document index covers.

        Appenders build a ``Ledger`` per event, so whether this store's scope is
        known to be indexed is remembered per process, not per instance: one
        conditional create per scope and process, not one per event.
        """
        known = _INDEXED.setdefault(self.raw, set())
        if self.tenant not in known:
            self._store.create(f"{prefix(self.tenant)}index-from", str(max(seq, 1)).encode())
            known.add(self.tenant)

    def indexed_from(self) -> int | None:
        try:
            return int(self._store.get(f"{prefix(self.tenant)}index-from"))
        except (KeyError, ValueError):
            return None

    def stored_checkpoint(self, size: int) -> bytes:
        """The stored checkpoint object of tree ``size``; ObjectMissing when there is none."""
        return self._store.get(checkpoint_key(self.tenant, size))

    def checkpoint_sizes(self) -> list[int]:
        folder = f"{prefix(self.tenant)}tlog/"
        names = (k[len(folder) : -5] for k in self._store.list(folder))
        return [int(n) for n in names if n.isdigit()]


def scopes(store: ObjectStore) -> list[str | None]:
    """Every tenant scope that has a ledger."""
    found = {key.split("/")[1] for key in store.list("ledger/")}
    return [None if s == "_" else s for s in sorted(found)]
