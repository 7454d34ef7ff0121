"""Batched sequencing and integration of one log (Trillian Tessera's shape, on create-only objects).

Appending is two steps, as in Tessera:

1. **Sequence.** Writers in a process queue their entries; one of them leads,
   takes the whole queue and creates *one* batch object (custody.ledger.batches),
   ``batch/<first>.json`` (``first``: the batch's first sequence number). The
   conditional create decides between processes: of two racing for the same
   ``first``, one wins and the other reads the winner's batch and goes after it.
   So writers contend once per batch, not once per entry. A created batch is
   durable, and its entries are acknowledged then: integration cannot skip it,
   since batch ``first`` is where integration of a tree of ``first - 1`` leaves
   must look next.
2. **Integrate.** Whoever finds integration free reads every batch after the
   integrated size, creates the entries' index markers, then the entry bundles
   and hash tiles (custody.ledger.edge), has the notary sign (and the witness
   cosign) one checkpoint for the lot, records the new size in ``integrated`` (a
   hint; the tiles are the truth) and deletes the superseded partial tiles. No
   writer waits for it, so the next batch forms while this one integrates.
   Integrating a batch twice (two processes racing) writes the same bytes
   again: every object is create-only and determined by the batches.

Per process there is one :class:`Log` per store object and log prefix
(:func:`log_for`), so the cached position and edge are shared by every
``Ledger`` built on that store.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from custody.ledger.batches import Batch
from custody.ledger.integrate import Integrator, Legacy, Signs
from custody.ledger.tiles import Tree
from custody.stores import ObjectStore

GENESIS = "0" * 64
BATCH_MAX = 512  # entries one batch holds at most: a leader takes no more from the queue
_LINGER_S = 0.002  # a leader waits at most this long for the last batch's writers to queue


#: (seq, previous entry's hash) -> (entry bytes, its hash, its markers, the caller's result)
Maker = Callable[[int, str], tuple[bytes, str, list[str], Any]]


@dataclass
class _Pending:
    make: Maker
    result: Any = None
    error: BaseException | None = None
    done: bool = False


class Log:
    """One tiled log under ``prefix``: sequencing, integration and reading what is pending.

    It holds this process's coordination only (locks, the cached end and edge);
    each call names the store, which the registry in :func:`log_for` is keyed by.
    """

    def __init__(self, prefix: str, hash_of: Callable[[bytes], str]) -> None:
        self.prefix, self.hash_of = prefix, hash_of
        # One writer leads each batch; the others wait on ``_turn`` for theirs to be done,
        # so those done return at once and the next leader takes all who queued meanwhile.
        # A new leader lingers on ``_filled`` (same lock) for as many as led the last batch.
        lock = threading.Lock()
        self._turn, self._filled = threading.Condition(lock), threading.Condition(lock)
        self._leading = False
        self._queue: list[_Pending] = []
        self._last = 1  # entries the last batch took
        self._next: tuple[int, str] | None = None  # (first of the next batch, last entry's hash)
        self.integrator = Integrator(prefix)

    def batch_key(self, first: int) -> str:
        return self.integrator.batch_key(first)

    # --- sequencing ---------------------------------------------------------------

    def append(self, store: ObjectStore, make: Maker, legacy: Legacy) -> Any:
        """Sequence one entry in the next batch; its result once the batch is durable."""
        mine = _Pending(make)
        with self._turn:
            self._queue.append(mine)
            self._filled.notify()  # a lingering leader counts us in
        while not mine.done:
            with self._turn:  # wait for our batch, or to lead the next one
                while self._leading and not mine.done:
                    self._turn.wait()
                if mine.done:
                    break
                self._leading = True
                taken = self._take()
            try:
                self._sequence(store, taken, legacy)
            finally:
                with self._turn:
                    self._leading = False
                    self._turn.notify_all()
        if mine.error is not None:
            raise mine.error
        return mine.result

    def _take(self) -> list[_Pending]:
        """The next batch's entries (the lock held). Writers whose batch was just acknowledged
        are a moment from queueing again, so the leader waits that moment for as many as
        the last batch had: one batch object (and fsync) for all of them, not for half.
        A lone writer never waits; a writer gone quiet costs one linger, then is not waited for."""
        want = min(self._last, BATCH_MAX)
        if len(self._queue) < want:
            self._filled.wait_for(lambda: len(self._queue) >= want, _LINGER_S)
        taken, self._queue = self._queue[:BATCH_MAX], self._queue[BATCH_MAX:]
        self._last = len(taken)
        return taken

    def _sequence(self, store: ObjectStore, taken: list[_Pending], legacy: Legacy) -> None:
        try:
            results = self._claim(store, taken, legacy)
        except BaseException as exc:  # every writer of the batch hears why, none hangs
            for pending in taken:
                pending.error, pending.done = exc, True
            raise
        # Known to integration (in _claim) before any writer hears its entry is in.
        for pending, result in zip(taken, results, strict=True):
            pending.result, pending.done = result, True

    def _claim(self, store: ObjectStore, taken: list[_Pending], legacy: Legacy) -> list[Any]:
        """Create the batch at the end of the log, going after any batch that wins first;
        each entry's result."""
        for _ in range(1000):
            first, prev = self._next or self._end(store, legacy)
            entries, markers, results = [], [], []
            for offset, pending in enumerate(taken):
                entry, prev, marks, result = pending.make(first + offset, prev)
                entries.append(entry)
                markers.append(marks)
                results.append(result)
            batch = Batch(first, entries, markers)
            # Created and known to this process's integration in one step: an integration
            # running now (a writer of the last batch) waits for it rather than reading it back.
            with self.integrator.making:
                if store.create(self.batch_key(first), batch.encode()):
                    self.integrator.made(batch)
                    self._next = (batch.end + 1, prev)
                    return results
            # Lost ``first``: go after the winners (or start over, if it is gone again).
            self._next = self._after(store, first - 1)
        raise RuntimeError("ledger sequencing kept losing races")

    def _end(self, store: ObjectStore, legacy: Legacy) -> tuple[int, str]:
        """The next free batch and the hash before it: after the integrated tree's batches."""
        size = self.integrated_size(store, legacy)
        found = self._after(store, size)
        if found is not None:
            return found
        prev = self.hash_of(self.tree(store, size).entry(size - 1)) if size else GENESIS
        return size + 1, prev

    def _after(self, store: ObjectStore, size: int) -> tuple[int, str] | None:
        """After the batches that follow ``size`` (None: there are none)."""
        batches = self.pending(store, size)
        if not batches:
            return None
        return batches[-1].end + 1, self.hash_of(batches[-1].entries[-1])

    # --- integration and reading: custody.ledger.integrate ---------------------------

    def kick(self, store: ObjectStore, notary: Signs | None, legacy: Legacy) -> None:
        self.integrator.kick(store, notary, legacy)

    def integrate(self, store: ObjectStore, notary: Signs | None, legacy: Legacy) -> int:
        size: int = self.integrator.integrate(store, notary, legacy)
        return size

    def integrated_size(self, store: ObjectStore, legacy: Legacy | None = None) -> int:
        return self.integrator.size(store, legacy)

    def tree(self, store: ObjectStore, size: int) -> Tree:
        return self.integrator.tree(store, size)

    def pending(self, store: ObjectStore, size: int, limit: int | None = None) -> list[Batch]:
        return self.integrator.pending(store, size, limit)


_LOGS: weakref.WeakKeyDictionary[ObjectStore, dict[str, Log]] = weakref.WeakKeyDictionary()
_LOGS_LOCK = threading.Lock()


def log_for(store: ObjectStore, prefix: str, hash_of: Callable[[bytes], str]) -> Log:
    """This process's one :class:`Log` for ``prefix`` of ``store`` (the store object a
    ``Ledger`` was given, so wrappers made per call do not split it)."""
    with _LOGS_LOCK:
        logs = _LOGS.setdefault(store, {})
        if prefix not in logs:
            logs[prefix] = Log(prefix, hash_of)
        return logs[prefix]
