"""A store that waits out a short outage instead of failing the step that called it.

Inside an expensive step (OCR), a store outage of a few seconds must not use
up the step's few attempts: Temporal's retry policy cannot tell "the engine
failed" from "the store blinked", and three OCR attempts are gone in about six
seconds of backoff. ``PatientStore`` retries ``StoreUnavailable`` within one
attempt, with exponential backoff and full jitter (so many workers coming back
at once do not arrive in step), for at most ``budget_s`` per call, calling
``on_wait`` between tries so the activity keeps heartbeating. Past the budget
the error propagates and the activity's own retry policy takes over.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO, TypeVar

from custody.stores.base import ObjectStore, StoreUnavailable

T = TypeVar("T")


class PatientStore:
    def __init__(
        self,
        inner: ObjectStore,
        budget_s: float = 60.0,
        on_wait: Callable[[], None] | None = None,
        *,
        first_s: float = 0.25,
        cap_s: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.inner = inner
        self._budget_s = budget_s
        self._on_wait = on_wait
        self._first_s, self._cap_s = first_s, cap_s
        self._sleep = sleep
        self.waits = 0  # how many times a call waited: for tests and metrics

    def __repr__(self) -> str:
        return f"PatientStore({self.inner!r})"

    def _call(self, fn: Callable[[], T], rewind: Callable[[], None] | None = None) -> T:
        deadline = time.monotonic() + self._budget_s
        delay = self._first_s
        while True:
            try:
                return fn()
            except StoreUnavailable:
                pause = random.uniform(0, delay)  # full jitter
                if time.monotonic() + pause > deadline:
                    raise
            self.waits += 1
            if self._on_wait is not None:
                self._on_wait()
            self._sleep(pause)
            delay = min(delay * 2, self._cap_s)
            if rewind is not None:
                rewind()

    def create(self, key: str, data: bytes) -> bool:
        return self._call(lambda: self.inner.create(key, data))

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        start = src.tell()

        def rewind() -> None:  # a failed upload read part of the file
            src.seek(start)

        return self._call(lambda: self.inner.create_from_file(key, src), rewind)

    def put(self, key: str, data: bytes) -> None:
        self._call(lambda: self.inner.put(key, data))

    def get(self, key: str) -> bytes:
        return self._call(lambda: self.inner.get(key))

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        start = dst.tell()

        def rewind() -> None:  # a failed download may have written part of the object
            dst.seek(start)
            dst.truncate()

        return self._call(lambda: self.inner.download(key, dst, chunk_size), rewind)

    def exists(self, key: str) -> bool:
        return self._call(lambda: self.inner.exists(key))

    def size(self, key: str) -> int:
        return self._call(lambda: self.inner.size(key))

    def delete(self, key: str) -> None:
        self._call(lambda: self.inner.delete(key))

    def list(self, prefix: str) -> Iterator[str]:
        # Listed whole inside the retry: an outage mid-iteration must not cut a listing short.
        return iter(self._call(lambda: list(self.inner.list(prefix))))
