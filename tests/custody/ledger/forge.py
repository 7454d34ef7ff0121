"""What an insider with write access to the store (and, where given, the log's signing key) can do.

Used by the tests of truncation and rewriting: the insider replaces a tenant's
whole log with another history written by Custody's own code, so every object
in the store is self-consistent and, with the key, freshly signed. Only what
lies outside the store (a witness, an auditor's state file) can tell.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from custody import ids
from custody.canonical import canonical_json
from custody.ledger.batches import Batch
from custody.ledger.checkpoints import Notary
from custody.ledger.events import GENESIS, Event, Ledger, marker_key, prefix
from custody.ledger.tiles import WIDTH, bundle_key, decode_bundle, encode_bundle, width_at
from custody.stores.local import LocalStore


def history(root: Path, tenant: str | None) -> list[Event]:
    """The tenant's events as the store holds them now (read through a fresh store object)."""
    return list(Ledger(LocalStore(root), tenant).events())


def forge(root: Path, tenant: str | None, events: list[Event], notary: Notary | None) -> LocalStore:
    """Replace the tenant's log with ``events`` renumbered and re-chained in order, as one
    batch integrated by Custody's code; with ``notary``, signed (and sent to its witnesses).

    Returns a fresh store object, so no process cache remembers the old log.
    """
    shutil.rmtree(root / "ledger" / ids.scope(tenant))
    store = LocalStore(root)
    entries, markers, prev = [], [], GENESIS
    for seq, event in enumerate(events, 1):
        moved = event.model_copy(update={"seq": seq, "prev": prev, "hash": ""})
        moved = moved.model_copy(update={"hash": moved.body_hash()})
        entries.append(canonical_json(moved))
        markers.append([marker_key(tenant, moved.sha256, seq)] if moved.sha256 else [])
        prev = moved.hash
    ledger = Ledger(store, tenant, notary)
    store.create(f"{ledger.prefix}index-from", b"1")
    batch = Batch(1, entries, markers)
    store.create(ledger.log.batch_key(1), batch.encode())
    ledger.seal()
    return LocalStore(root)


def bundle_file(store: LocalStore, tenant: str | None, seq: int) -> Path:
    """The file of the entry bundle holding event ``seq`` (full, or the right edge's partial)."""
    size, index = Ledger(store, tenant).size(), (seq - 1) // WIDTH
    return store.root / bundle_key(prefix(tenant), index, width_at(size, 0, index))


def edit_events(
    store: LocalStore, tenant: str | None, seq: int, change: Callable[[list[bytes]], list[bytes]]
) -> None:
    """Edit the (unsealed) bundle holding ``seq`` in place: ``change`` gets its entries."""
    path = bundle_file(store, tenant, seq)
    path.write_bytes(encode_bundle(change(decode_bundle(path.read_bytes()))))


def replace_event(store: LocalStore, tenant: str | None, seq: int, entry: bytes | None) -> None:
    """Event ``seq``'s bytes replaced in its bundle, or (None) cut out of it."""
    at = (seq - 1) % WIDTH
    edit_events(store, tenant, seq, lambda e: [*e[:at], *([entry] if entry else []), *e[at + 1 :]])


def swap_events(store: LocalStore, tenant: str | None, a: int, b: int) -> None:
    """Two events of one bundle change places."""
    i, j = (a - 1) % WIDTH, (b - 1) % WIDTH

    def swap(entries: list[bytes]) -> list[bytes]:
        entries[i], entries[j] = entries[j], entries[i]
        return entries

    edit_events(store, tenant, a, swap)
