"""The audit ledger: an append-only hash chain per tenant, in the object store.

Event N lives at ``ledger/<scope>/events/<N>.json`` and holds the SHA-256 of
event N-1 (``prev``) and of its own canonical body (``hash``). Appending is a
conditional create of the next sequence number: of two writers racing for
N+1, exactly one wins; the loser re-reads the head and appends after it. So
writers on many workers never fork or break the chain, with no lock and no
database. ``ledger/<scope>/head.json`` is only a hint for finding the end.

Verification recomputes every hash and link, and finds a gap (a deleted event),
an event whose body does not match its place (inserted or reordered), or a
changed byte. Deleting events from the end leaves a valid shorter chain, so
``checkpoint`` signs the head from time to time (on every publish); a
checkpoint beyond the head, or one whose hash differs from the event at its
sequence number, exposes truncation.

Finding one document's events must not mean reading every event of the
tenant: before claiming sequence number N for a document's event, the appender
creates the marker ``ledger/<scope>/by-doc/<sha256>/<N>``. Written first, the
index can only over-point (a marker whose race was lost names another
document's event, and readers check ``sha256``), never miss. Ledgers begun
before the index record where it starts (``index-from``); events before that
are found by a scan, as they always were.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from custody import ids
from custody.canonical import canonical_json
from custody.signing import Signature, Signer
from custody.stores import ObjectStore

GENESIS = "0" * 64
_MAX_RACE = 1000
#: Per store object, the tenant scopes whose ``index-from`` this process has ensured.
_INDEXED: weakref.WeakKeyDictionary[ObjectStore, set[str | None]] = weakref.WeakKeyDictionary()


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


class Checkpoint(BaseModel):
    seq: int
    hash: str
    at: datetime
    signature: Signature | None = None

    def body(self) -> bytes:
        return canonical_json(self.model_dump(mode="json", exclude={"signature"}))


def _prefix(tenant: str | None) -> str:
    return f"ledger/{ids.scope(tenant)}/"


def event_key(tenant: str | None, seq: int) -> str:
    return f"{_prefix(tenant)}events/{seq:012d}.json"


class Ledger:
    def __init__(self, store: ObjectStore, tenant: str | None) -> None:
        self._store = store
        self.tenant = tenant
        self._head_key = f"{_prefix(tenant)}head.json"

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
                self._store.create(self._marker(sha256, event.seq), b"")
            for marker in markers(event.seq) if markers else ():
                self._store.create(marker, b"")
            if self._store.create(event_key(self.tenant, event.seq), canonical_json(event)):
                self._store.put(self._head_key, str(event.seq).encode())
                return event
            seq += 1  # lost the race for this number; go after the winner
        raise RuntimeError("ledger append kept losing races")

    def _hinted_head(self) -> int:
        try:
            return int(self._store.get(self._head_key))
        except (KeyError, ValueError):
            return 0

    def get(self, seq: int) -> Event:
        return Event.model_validate_json(self._store.get(event_key(self.tenant, seq)))

    def sequence_numbers(self) -> list[int]:
        prefix = f"{_prefix(self.tenant)}events/"
        return [int(k[len(prefix) : -5]) for k in self._store.list(prefix)]

    def events(self) -> Iterator[Event]:
        for seq in self.sequence_numbers():
            yield self.get(seq)

    def for_document(self, sha256: str) -> list[Event]:
        """The document's events in order: from the index, plus a scan of what predates it."""
        start = self._indexed_from()
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
        """Sequence numbers the index names for this document (some may be other documents')."""
        prefix = f"{_prefix(self.tenant)}by-doc/{sha256}/"
        return [int(key[len(prefix) :]) for key in self._store.list(prefix)]

    def has(self, seq: int) -> bool:
        return self._store.exists(event_key(self.tenant, seq))

    def newest_checkpoint(self) -> Checkpoint | None:
        keys = list(self._store.list(f"{_prefix(self.tenant)}checkpoints/"))
        return Checkpoint.model_validate_json(self._store.get(keys[-1])) if keys else None

    def _marker(self, sha256: str, seq: int) -> str:
        return f"{_prefix(self.tenant)}by-doc/{sha256}/{seq:012d}"

    def _index_from(self, seq: int) -> None:
        """Record, once, the first sequence number the by-document index covers.

        Appenders build a ``Ledger`` per event, so whether this store's scope is
        known to be indexed is remembered per process, not per instance: one
        conditional create per scope and process, not one per event.
        """
        known = _INDEXED.setdefault(self._store, set())
        if self.tenant not in known:
            self._store.create(f"{_prefix(self.tenant)}index-from", str(max(seq, 1)).encode())
            known.add(self.tenant)

    def _indexed_from(self) -> int | None:
        try:
            return int(self._store.get(f"{_prefix(self.tenant)}index-from"))
        except (KeyError, ValueError):
            return None

    def checkpoint(self, signer: Signer, head: Event | None = None) -> Checkpoint:
        """Sign ``head`` (default: the newest event), so a later truncation shows.

        Appenders pass the event they just wrote, which spares a listing of the
        whole chain; any event at or before the true head is a valid checkpoint.
        """
        if head is None:
            seqs = self.sequence_numbers()
            head = self.get(seqs[-1]) if seqs else None
        cp = Checkpoint(
            seq=head.seq if head else 0, hash=head.hash if head else GENESIS, at=datetime.now(UTC)
        )
        cp = cp.model_copy(update={"signature": signer.sign(cp.body())})
        self._store.create(
            f"{_prefix(self.tenant)}checkpoints/{cp.seq:012d}.json", canonical_json(cp)
        )
        return cp

    def checkpoints(self) -> list[Checkpoint]:
        prefix = f"{_prefix(self.tenant)}checkpoints/"
        return [
            Checkpoint.model_validate_json(self._store.get(k)) for k in self._store.list(prefix)
        ]


def scopes(store: ObjectStore) -> list[str | None]:
    """Every tenant scope that has a ledger."""
    found = {key.split("/")[1] for key in store.list("ledger/")}
    return [None if s == "_" else s for s in sorted(found)]
