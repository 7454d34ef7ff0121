"""Engine lanes: the OCR worker holds more documents than it recognises at once.

An OCR attempt is mostly engine time, but not only: the staged copy is fetched
and hashed, pages are rasterised, each finished page is sealed into the store,
the searchable PDF is built. With one pool slot per engine, the engine idles
through all of that between documents, and that idle time is pipeline
overhead on every page.

So the engine is a resource of its own. A worker has ``CUSTODY_OCR_CONCURRENCY``
lanes (each sized to ``cores / lanes`` threads, so the CPU is never
oversubscribed) and takes ``CUSTODY_OCR_PREFETCH`` documents more than that
from the queue. Only the engine call holds a lane: the next document is staged
and rasterised while this one is recognised, and this one's pages are written
while the next is recognised.

A page waiting for a lane heartbeats, so a queue behind a slow page is not
taken for a lost worker; its page deadline (``activities.ocr``) starts only
when it holds a lane.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class EngineLanes:
    """A counting semaphore whose waiters heartbeat, with the seconds they waited."""

    def __init__(self, lanes: int, beat_every_s: float = 5.0) -> None:
        if lanes < 1:
            raise ValueError("an OCR worker needs at least one engine lane")
        self._free = threading.Semaphore(lanes)
        self._beat_every_s = beat_every_s
        self._lock = threading.Lock()
        self._busy = 0

    @property
    def busy(self) -> int:
        return self._busy

    @contextmanager
    def lane(self, beat: Callable[[], None]) -> Iterator[float]:
        """Hold a lane for the block; yields the seconds spent waiting for it."""
        started = time.monotonic()
        while not self._free.acquire(timeout=self._beat_every_s):
            beat()  # may raise if the attempt was cancelled: then no lane is held
        waited = time.monotonic() - started
        with self._lock:
            self._busy += 1
        try:
            yield waited
        finally:
            with self._lock:
                self._busy -= 1
            self._free.release()
