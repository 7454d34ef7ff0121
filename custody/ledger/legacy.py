"""Ledgers written before tiles: ``events/<N>.json``, one object per event.

Until issue #30 event N lived at ``ledger/<scope>/events/<N:012d>.json`` and
its stored bytes were leaf N-1 of the log's Merkle tree; checkpoints were
``tlog/<N>.json``. Tiles are built from exactly those bytes, so a migrated
log has the same tree heads and every checkpoint and witness note signed
before still verifies. The old objects stay where they are, never read again
once the tiles hold them (``custody audit verify --full`` compares them).

Migration happens on the first append (or ``custody audit seal``) by code that
knows tiles; until then readers read the old objects (:class:`LegacyLog`). A
log with a hole (an event missing below its newest) is not migrated: that is
tampering or loss for an operator to look at, not something to paper over
(``LEDGER_INVALID``). Writers still running the old code must be stopped
before the first new one appends: the two layouts do not see each other.
"""

from __future__ import annotations

from custody.errors import LedgerInvalid, StoreError
from custody.ledger.edge import Edge
from custody.ledger.tiles import Objects, Tiles
from custody.stores import ObjectMissing, ObjectStore


def event_key(prefix: str, seq: int) -> str:
    return f"{prefix}events/{seq:012d}.json"


class LegacyLog:
    """The old layout of one log, read through ``store`` (the ledger's sealed view)."""

    def __init__(self, store: ObjectStore, prefix: str) -> None:
        self.store, self.prefix = store, prefix

    def present(self) -> bool:
        """Whether the log has events in the old layout (a hint first, then a listing)."""
        if self.store.exists(f"{self.prefix}head.json"):
            return True
        return any(True for _ in self.store.list(f"{self.prefix}events/"))

    def sequence_numbers(self) -> list[int]:
        folder = f"{self.prefix}events/"
        names = (key[len(folder) : -5] for key in self.store.list(folder))
        return sorted(int(name) for name in names if name.isdigit())

    def entry(self, seq: int) -> bytes:
        return self.store.get(event_key(self.prefix, seq))

    def tiles(self) -> tuple[Tiles, int]:
        """The old log's tiles, built in memory for reading it before it is migrated: a
        missing event holds its place as an empty entry, so every proof through it fails."""
        seqs = self.sequence_numbers()
        entries = [self._entry_or_empty(seq) for seq in range(1, max(seqs, default=0) + 1)]
        edge = Edge(self.prefix)
        return Tiles(Objects(edge.extend(entries).create), self.prefix), edge.size

    def _entry_or_empty(self, seq: int) -> bytes:
        try:
            return self.entry(seq)
        except (ObjectMissing, StoreError):
            return b""

    def entries(self) -> list[bytes]:
        """Every old event's bytes in order; a hole refuses migration (``LEDGER_INVALID``)."""
        seqs = self.sequence_numbers()
        if seqs != list(range(1, len(seqs) + 1)):
            missing = next(n for n in range(1, len(seqs) + 2) if n not in set(seqs))
            raise LedgerInvalid(detail=f"{self.prefix}: old event {missing} missing; not migrated")
        try:
            return [self.entry(seq) for seq in seqs]
        except ObjectMissing as err:
            detail = f"{self.prefix}: an old event vanished while migrating"
            raise LedgerInvalid(detail=detail) from err
