"""Batches: the entries one writer sequenced together, as the durable object that numbers them.

``ledger/<scope>/batch/<first>.json`` holds the entries (exact bytes, as JSON
strings) from sequence number ``first`` and, for each, the index markers its
integration creates. It is created once (the conditional create is what two
processes racing for ``first`` meet on) and never changed: the batch after a
tree of n leaves is always at ``n + 1``, which is why integration cannot skip
one and why an entry is durable once its batch is.

Also here: the small pool that integration's store round trips run on side by side.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from custody.stores import ObjectMissing, ObjectStore

_LANES = 16  # store round trips in flight at once while integrating
_POOL = ThreadPoolExecutor(_LANES, thread_name_prefix="ledger-io")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Batch:
    """Entries sequenced together, from ``first``; ``markers[i]``: index objects of entry i."""

    first: int
    entries: list[bytes]
    markers: list[list[str]]

    @property
    def end(self) -> int:
        return self.first + len(self.entries) - 1

    def encode(self) -> bytes:
        entries = [e.decode() for e in self.entries]
        body = {"first": self.first, "entries": entries, "markers": self.markers}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()

    @classmethod
    def decode(cls, data: bytes) -> Batch:
        body = json.loads(data)
        entries = [str(e).encode() for e in body["entries"]]
        return cls(int(body["first"]), entries, [list(m) for m in body["markers"]])


def pending(
    store: ObjectStore,
    key_of: Callable[[int], str],
    size: int,
    limit: int | None = None,
    known: dict[int, Batch] | None = None,
) -> list[Batch]:
    """The batches after a tree of ``size`` leaves, in their chain (``key_of(first)``);
    those in ``known`` (by first; taken out of it) are not read again."""
    found: list[Batch] = []
    while limit is None or len(found) < limit:
        batch = known.pop(size + 1, None) if known is not None else None
        try:
            batch = batch or Batch.decode(store.get(key_of(size + 1)))
        except ObjectMissing:
            break
        if batch.first != size + 1 or not batch.entries:
            raise ValueError(f"batch {size + 1} holds another place")
        found.append(batch)
        size = batch.end
    return found


def parallel(fn: Callable[..., object], calls: Iterable[tuple[Any, ...]]) -> None:
    """Run the store calls side by side (a few lanes, each calling in turn) and wait for
    all; the first error is raised. A call or two runs here: a thread hand-off costs more."""
    todo = list(calls)
    if len(todo) <= 2:
        for args in todo:
            fn(*args)
        return
    lanes = [todo[i::_LANES] for i in range(min(_LANES, len(todo)))]
    futures = [_POOL.submit(_each, fn, lane) for lane in lanes]
    for future in futures:
        future.result()


def forget(store: ObjectStore, key: str) -> None:
    """Delete a superseded partial tile, if the store lets us: a bucket whose policy keeps
    every tile (deploy/s3) refuses, and readers take the wider one either way."""
    try:
        store.delete(key)
    except Exception as exc:  # never worth failing an integration over
        _log.debug("partial tile kept: %s", type(exc).__name__)


def _each(fn: Callable[..., object], lane: list[tuple[Any, ...]]) -> None:
    for args in lane:
        fn(*args)
