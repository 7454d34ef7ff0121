"""Integration: sequenced batches become tiles, index markers and one signed checkpoint.

Whoever finds integration free (custody.ledger.sequencer calls :meth:`Integrator.kick`
after each batch) reads every batch after the integrated size, creates the
entries' index markers, then the entry bundles and hash tiles
(custody.ledger.edge), has the notary sign (and the witnesses cosign) one
checkpoint for the lot, records the new size in ``integrated`` (a hint; the
tiles are the truth) and deletes the superseded partial tiles. Markers come
first, so an entry in the tiles is always indexed. Integrating a batch twice
(two processes racing) writes the same bytes again: every object is created
once and determined by the batches. A log written before tiles is migrated
here first (custody.ledger.legacy).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Protocol

from custody.ledger.batches import Batch, forget, parallel, pending
from custody.ledger.edge import Edge
from custody.ledger.tiles import Tiles, Tree
from custody.stores import ObjectMissing, ObjectStore

_ROUND_MAX = 64  # batches per integration round, so a backlog is checkpointed as it drains
_ROUND_EVENTS, _ROUND_WAIT_S = 64, 0.02  # a round waits this long for this many, while busy
_MADE_MAX = 256  # batches created here and held for integration, at most (then read back)
_log = logging.getLogger(__name__)


class Signs(Protocol):
    """What integration asks of a notary (custody.ledger.checkpoints.Notary)."""

    def sign_head(self, store: ObjectStore, log: Integrator, tree: Tree, root: bytes) -> bytes: ...


class Legacy(Protocol):
    """A log written before tiles (custody.ledger.legacy): present, and its entries in order."""

    def present(self) -> bool: ...

    def entries(self) -> list[bytes]: ...


class Notary(Signs, Protocol):
    """Signs (and has witnessed) tree heads; custody.ledger.checkpoints has one."""


#: Per store object, the notary that appenders without one of their own use.
_NOTARIES: weakref.WeakKeyDictionary[ObjectStore, Notary] = weakref.WeakKeyDictionary()


def notarize(store: ObjectStore, notary: Notary) -> None:
    """Make every later integration through ``store`` in this process end with a checkpoint."""
    _NOTARIES[store] = notary


def notary_of(store: ObjectStore) -> Notary | None:
    """The notary of ``store`` or of a store it wraps (an activity may add a wrapper)."""
    layer: ObjectStore | None = store
    while layer is not None:
        if (found := _NOTARIES.get(layer)) is not None:
            return found
        layer = getattr(layer, "inner", None)
    return None


class Integrator:
    """One log's integration in this process: its lock, and the right edge it last wrote."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._int_lock = threading.RLock()  # reentrant: integrating may first migrate
        self._edge: Edge | None = None
        self._made: dict[int, Batch] = {}  # created here, by first: integrated without a read
        # Held from a batch's create until it is in ``_made``; integration's read of the
        # pending batches waits on it, so a batch made here is never read back.
        self.making = threading.Lock()
        self.sequenced = 0  # the highest sequence number this process saw sequenced

    def batch_key(self, first: int) -> str:
        return f"{self.prefix}batch/{first:012d}.json"

    @property
    def hint_key(self) -> str:
        return f"{self.prefix}integrated"

    def made(self, batch: Batch) -> None:
        """A batch this process just created: the store holds exactly it (created once, never
        changed), so integrating it need not read it back."""
        if len(self._made) >= _MADE_MAX:  # integration has fallen far behind, or was elsewhere
            self._made.clear()
        self._made[batch.first] = batch
        self.sequenced = max(self.sequenced, batch.end)

    def kick(self, store: ObjectStore, notary: Signs | None, legacy: Legacy) -> None:
        """Integrate what is sequenced, unless another thread is at it (it will see ours).

        While writers keep sequencing, each round waits a moment for a fuller one:
        one integration and one checkpoint per short interval, not per batch.
        """
        while self._int_lock.acquire(blocking=False):
            try:
                size = self._integrate(store, notary, legacy)
            except Exception as exc:  # sequenced is durable: the next append or seal integrates
                _log.warning("ledger integration failed: %s", type(exc).__name__)
                return
            finally:
                self._int_lock.release()
            if size >= self.sequenced:
                return
            if self.sequenced - size < _ROUND_EVENTS:
                time.sleep(_ROUND_WAIT_S)

    def integrate(self, store: ObjectStore, notary: Signs | None, legacy: Legacy) -> int:
        """Integrate everything sequenced so far (waiting for a running integration); the size."""
        with self._int_lock:
            size, before = self._integrate(store, notary, legacy), -1
            while size != before:
                size, before = self._integrate(store, notary, legacy), size
            return size

    def _integrate(self, store: ObjectStore, notary: Signs | None, legacy: Legacy) -> int:
        edge = self._current_edge(store, legacy)
        for first in [f for f in list(self._made) if f <= edge.size]:  # integrated elsewhere
            self._made.pop(first, None)
        with self.making:
            batches = pending(store, self.batch_key, edge.size, _ROUND_MAX, self._made)
        if not batches:
            return edge.size
        self._edge = None  # extended below: kept again only once all of it is stored
        marks = ((m, b"") for b in batches for ms in b.markers for m in ms)
        parallel(store.create, marks)  # first: an entry in the tiles is always indexed
        writes = edge.extend([entry for b in batches for entry in b.entries])
        parallel(store.create, writes.create.items())
        if notary is not None:
            notary.sign_head(store, self, self.tree(store, edge.size), edge.root())
        if self.size(store) < edge.size:  # a slower integrator never moves the hint back
            store.put(self.hint_key, str(edge.size).encode())
        parallel(forget, ((store, key) for key in writes.delete))
        self._edge = edge
        self.sequenced = max(self.sequenced, edge.size)
        return edge.size

    def _current_edge(self, store: ObjectStore, legacy: Legacy) -> Edge:
        """The cached edge, unless another process integrated further (then read it)."""
        size = self.size(store, legacy)
        if self._edge is None or self._edge.size < size:
            self._edge = Edge.load(Tiles(store, self.prefix), size)
        return self._edge

    def size(self, store: ObjectStore, legacy: Legacy | None = None) -> int:
        """The integrated tree's size by the hint (0: none); given ``legacy``, an old log
        is migrated first."""
        try:
            return int(store.get(self.hint_key))
        except (ObjectMissing, ValueError):
            pass
        if legacy is not None and legacy.present():
            return self._migrate(store, legacy)
        return 0

    def _migrate(self, store: ObjectStore, legacy: Legacy) -> int:
        """Tiles for a log written before them: the same leaves, so its checkpoints still hold."""
        with self._int_lock:
            edge = Edge(self.prefix)
            writes = edge.extend(legacy.entries())
            parallel(store.create, writes.create.items())
            store.put(self.hint_key, str(edge.size).encode())
            self._edge = edge
            return edge.size

    def tree(self, store: ObjectStore, size: int) -> Tree:
        return Tree(Tiles(store, self.prefix), size)

    def pending(self, store: ObjectStore, size: int, limit: int | None = None) -> list[Batch]:
        """The batches after a tree of ``size`` leaves, in order (sequenced, maybe integrated)."""
        return pending(store, self.batch_key, size, limit)
