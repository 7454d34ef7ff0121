"""The audit ledger: an append-only transparency log per tenant, in the object store.

Each event holds the SHA-256 of the event before it (``prev``) and of its own
canonical body (``hash``); its stored bytes are one leaf of an RFC 9162 Merkle
tree kept as C2SP tlog-tiles under ``ledger/<scope>/`` (custody.ledger.tiles:
entry bundles and hash tiles, so any proof reads O(log n) objects). Events are
sequenced and integrated in batches (custody.ledger.sequencer): many writers
contend once per batch, an event is acknowledged once its batch object is
durable, and integration, which cannot skip a batch, writes the tiles and has
the :class:`Notary` sign one checkpoint for all it integrated.

The ledger holds hashes, codes and ids, never document content, and is sealed
under the system's key-encryption key (scope ``_system``), not the tenant's: a
crypto-shredded tenant's audit trail stays readable and verifiable. Ledgers
sealed under the tenant's key before this still open with it; ledgers written
before tiles (``events/<N>.json``) are read as they are and migrated on the
first append (custody.ledger.legacy).

Finding one document's events must not mean reading every event of the
tenant: each event's index markers (``by-doc/<sha256>/<N>``, and any the caller
names) are created by integration before the event enters the tiles, so an
integrated event is always indexed; readers add the few batches not yet
integrated. Ledgers begun before the index record where it starts
(``index-from``); older events are scanned.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from custody.ledger.batches import Batch
from custody.ledger.entries import Event as Event
from custody.ledger.entries import canonical_over, hash_of
from custody.ledger.entries import checkpoint_key as checkpoint_key
from custody.ledger.entries import event_key as event_key
from custody.ledger.entries import marker_key as marker_key
from custody.ledger.entries import newest_checkpoint_key as newest_checkpoint_key
from custody.ledger.entries import prefix as prefix
from custody.ledger.integrate import Notary as Notary
from custody.ledger.integrate import notarize as notarize
from custody.ledger.integrate import notary_of
from custody.ledger.legacy import LegacyLog
from custody.ledger.sequencer import GENESIS as GENESIS
from custody.ledger.sequencer import Log, log_for
from custody.ledger.tiles import Tiles, Tree
from custody.stores import ObjectMissing, ObjectStore
from custody.stores.system import system_sealed

#: An event's members its sequencing sets (the rest are fixed when it is appended).
_SEQUENCED = {"hash", "seq", "prev", "at"}

#: Per store object, the tenant scopes whose ``index-from`` this process has ensured.
_INDEXED: weakref.WeakKeyDictionary[ObjectStore, set[str | None]] = weakref.WeakKeyDictionary()
_INDEXING = threading.Lock()  # one thread per process records it; the others wait, then skip


class Ledger:
    def __init__(
        self, store: ObjectStore, tenant: str | None, notary: Notary | None = None
    ) -> None:
        self.raw = store
        self._store = system_sealed(store)
        self.tenant = tenant
        self.notary = notary or notary_of(store)
        self.prefix = prefix(tenant)
        self.log: Log = log_for(store, self.prefix, hash_of)
        self.legacy = LegacyLog(self._store, self.prefix)
        self._tiles = Tiles(self._store, self.prefix)
        self._size: int | None = None
        self._legacy = False

    @property
    def store(self) -> ObjectStore:
        """The ledger's objects as stored (sealed under the system key, if sealing is on)."""
        return self._store

    # --- writing ------------------------------------------------------------------

    def append(
        self, kind: str, *, markers: Callable[[int], list[str]] | None = None, **fields: object
    ) -> Event:
        """Append one event after the current head; safe against concurrent writers.

        ``markers(seq)`` names extra index objects for the event, created with
        the by-document index before the event enters the tiles. Returns once
        the event's batch is durable (sequenced), and integrates it unless
        another thread of this process is integrating (it then does).
        """
        template = Event(seq=0, prev=GENESIS, at=datetime.now(UTC), kind=kind, **fields)  # type: ignore[arg-type]
        self._index_from()
        sha256 = template.sha256
        encode = canonical_over(template.model_dump(mode="json", exclude=_SEQUENCED))

        def make(seq: int, prev: str) -> tuple[bytes, str, list[str], Event]:
            at = datetime.now(UTC)
            when = at.isoformat().replace("+00:00", "Z")
            more: dict[str, object] = {"seq": seq, "prev": prev, "at": when}
            digest = hashlib.sha256(encode(more)).hexdigest()
            event = template.model_copy(update={"seq": seq, "prev": prev, "at": at, "hash": digest})
            marks = [marker_key(self.tenant, sha256, seq)] if sha256 else []
            marks += markers(seq) if markers else []
            return encode({**more, "hash": digest}), digest, marks, event

        event: Event = self.log.append(self._store, make, self.legacy)
        self.log.kick(self._store, self.notary, self.legacy)
        return event

    def seal(self, size: int = 0) -> None:
        """Integrate what is sequenced and, with a notary, sign (and witness) the tree head.

        Safe to repeat: an append whose integration or signing failed is
        sealed by its retry, or by ``custody audit seal``. ``size`` is only the
        least the signed head must cover; it covers everything integrated.
        """
        integrated = self.log.integrate(self._store, self.notary, self.legacy)
        self._size = None
        if self.notary is not None and integrated >= max(size, 1):
            tree = self.tree(integrated)  # signed again: the witnesses may have missed it
            self.notary.sign_head(self._store, self.log.integrator, tree, tree.root())

    def flush(self) -> int:
        """Integrate and sign everything appended so far; the integrated size."""
        self.seal()
        return self.size()

    # --- reading ------------------------------------------------------------------

    def size(self) -> int:
        """How many events the tiles hold (read once per instance, again when outgrown);
        for a log not migrated yet, how many its old layout holds."""
        if self._size is None:
            size = self.log.integrated_size(self._store)
            self._legacy = size == 0 and self.legacy.present()
            if self._legacy:
                self._tiles, size = self.legacy.tiles()
            elif self._tiles.store is not self._store:  # migrated meanwhile
                self._tiles = Tiles(self._store, self.prefix)
            self._size = size
        return self._size

    def tree(self, size: int | None = None) -> Tree:
        """The integrated tree of ``size`` leaves (default: all), read from the tiles."""
        whole = self.size()  # first: it picks the tiles (stored, or an old log's in memory)
        return Tree(self._tiles, whole if size is None else size)

    def is_legacy(self) -> bool:
        """Whether this log is still in the layout before tiles (its tree then built in memory)."""
        self.size()
        return self._legacy

    def pending(self) -> list[Batch]:
        """Batches sequenced after the integrated tree (usually none, or one in flight)."""
        return [] if self.is_legacy() else self.log.pending(self._store, self.size())

    def head(self) -> int:
        """The newest sequence number, integrated or not."""
        return max((b.end for b in self.pending()), default=self.size())

    def entry(self, seq: int) -> bytes:
        """Event ``seq``'s stored bytes: leaf ``seq - 1`` of the Merkle tree."""
        if self.is_legacy():
            return self.legacy.entry(seq)
        if self.size() < seq:
            self._size = None  # the log may have grown since it was read
        if 1 <= seq <= self.size():
            return self.tree().entry(seq - 1)
        for batch in self.pending() if seq > 0 else ():
            if batch.first <= seq <= batch.end:
                return batch.entries[seq - batch.first]
        raise ObjectMissing(f"{self.prefix}{seq}")

    def get(self, seq: int) -> Event:
        return Event.model_validate_json(self.entry(seq))

    def sequence_numbers(self) -> list[int]:
        if self.is_legacy():
            return self.legacy.sequence_numbers()  # holes stay holes
        return list(range(1, self.head() + 1))

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
        """Sequence numbers the index names for this document (the audit checks them),
        with those of batches not yet integrated."""
        folder = f"{self.prefix}by-doc/{sha256}/"
        names = [key[len(folder) :] for key in self._store.list(folder)]
        names += [key[len(folder) :] for key in self.pending_markers(folder)]
        return sorted({int(name) for name in names if name.isdigit()})

    def pending_markers(self, folder: str) -> list[str]:
        """Index markers under ``folder`` that batches not yet integrated will create."""
        return [m for b in self.pending() for ms in b.markers for m in ms if m.startswith(folder)]

    def has(self, seq: int) -> bool:
        return 1 <= seq <= self.head()

    def _index_from(self) -> None:
        """Record, once, the first sequence number the by-document index covers.

        Remembered per process and store, not per instance: one conditional
        create per scope and process, not one per event.
        """
        if self.tenant in _INDEXED.get(self.raw, ()):
            return
        with _INDEXING:  # first appends racing would each read the batches the others made
            known = _INDEXED.setdefault(self.raw, set())
            if self.tenant not in known:
                self._store.create(f"{self.prefix}index-from", str(self.head() + 1).encode())
                known.add(self.tenant)

    def indexed_from(self) -> int | None:
        try:
            return int(self._store.get(f"{self.prefix}index-from"))
        except (KeyError, ValueError):
            return None

    def stored_checkpoint(self, size: int) -> bytes:
        """The stored checkpoint object of tree ``size``; ObjectMissing when there is none."""
        return self._store.get(checkpoint_key(self.tenant, size))

    def newest_checkpoint(self) -> bytes | None:
        """The newest signed checkpoint note with its cosignatures, None before the first."""
        try:
            return self._store.get(newest_checkpoint_key(self.tenant))
        except ObjectMissing:
            return None

    def checkpoint_size(self) -> int:
        """The size the newest checkpoint claims (unverified: a writer's hint, 0: none)."""
        note = self.newest_checkpoint()
        try:
            return int(note.split(b"\n")[1]) if note else 0
        except (IndexError, ValueError):
            return 0

    def checkpoint_sizes(self) -> list[int]:
        folder = f"{self.prefix}tlog/"
        names = (k[len(folder) : -5] for k in self._store.list(folder))
        return [int(n) for n in names if n.isdigit()]


def scopes(store: ObjectStore) -> list[str | None]:
    """Every tenant scope that has a ledger."""
    found = {key.split("/")[1] for key in store.list("ledger/")}
    return [None if s == "_" else s for s in sorted(found)]
