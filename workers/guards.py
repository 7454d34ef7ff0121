"""The store and the OCR engine as the activities see them: behind a breaker each.

The activities take any ``ObjectStore`` and any ``OcrEngine``, so the workers
hand them these wrappers and nothing in ``activities/`` knows a breaker exists.
Anything else the wrapped object offers (a sealed store's ``keyring``, an
engine's ``warm_up``) passes straight through.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from activities.engines.base import OcrEngine
from custody.errors import CircuitOpen, DocumentRejected, Quarantined, StoreUnavailable
from custody.models import PageText
from custody.settings import Settings
from custody.stores import ObjectStore
from workers.breaker import Breaker, Listener

STORE = "store"
ENGINE = "ocr_engine"


def store_fault(err: BaseException) -> bool:
    """The store could not answer; a missing or existing key is an answer."""
    if isinstance(err, CircuitOpen):
        return False
    return isinstance(err, StoreUnavailable | ConnectionError | TimeoutError)


def engine_fault(err: BaseException) -> bool:
    """The engine crashed, its helper died or it hung: the engine is unavailable.

    A verdict on one document (a rejection or quarantine the engine raised on
    purpose) is an answer, like a store's "no object": counting it would let a
    batch of bad pages shut OCR off for every tenant.
    """
    if isinstance(err, CircuitOpen | DocumentRejected | Quarantined):
        return False
    return isinstance(err, Exception)


def breaker_for(name: str, settings: Settings, listener: Listener | None = None) -> Breaker:
    fault = store_fault if name == STORE else engine_fault
    return Breaker(
        name,
        fault,
        failures=settings.breaker_failures,
        open_s=settings.breaker_open_s,
        listener=listener,
    )


def _through(wrapper: Any, name: str) -> Any:
    """An attribute the wrapper lacks, from the wrapped object.

    Never ``inner`` itself or a dunder: ``copy.copy`` probes those on an instance
    whose ``__init__`` has not run (``custody.stores.system`` copies wrappers).
    """
    if name == "inner" or name.startswith("__"):
        raise AttributeError(name)
    return getattr(wrapper.inner, name)


class GuardedStore:
    """An ``ObjectStore`` whose every call goes through ``breaker``."""

    def __init__(self, inner: ObjectStore, breaker: Breaker) -> None:
        self.inner, self.breaker = inner, breaker

    def create(self, key: str, data: bytes) -> bool:
        return self.breaker.call(self.inner.create, key, data)

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        return self.breaker.call(self.inner.create_from_file, key, src)

    def put(self, key: str, data: bytes) -> None:
        self.breaker.call(self.inner.put, key, data)

    def get(self, key: str) -> bytes:
        return self.breaker.call(self.inner.get, key)

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        return self.breaker.call(self.inner.download, key, dst, chunk_size)

    def exists(self, key: str) -> bool:
        return self.breaker.call(self.inner.exists, key)

    def size(self, key: str) -> int:
        return self.breaker.call(self.inner.size, key)

    def delete(self, key: str) -> None:
        self.breaker.call(self.inner.delete, key)

    def list(self, prefix: str) -> Iterator[str]:
        # Listed whole inside the breaker: a fault mid-listing must count too.
        return iter(self.breaker.call(lambda: [*self.inner.list(prefix)]))

    def __getattr__(self, name: str) -> Any:
        return _through(self, name)


class GuardedEngine:
    """An ``OcrEngine`` whose page recognition goes through ``breaker``."""

    def __init__(self, inner: OcrEngine, breaker: Breaker) -> None:
        self.inner, self.breaker = inner, breaker
        self.name, self.version = inner.name, inner.version

    def params(self) -> dict[str, Any]:
        return self.inner.params()

    def model_hashes(self) -> dict[str, str]:
        return self.inner.model_hashes()

    def recognise(self, image: Any, page: int) -> PageText:
        return self.breaker.call(self.inner.recognise, image, page)

    def __getattr__(self, name: str) -> Any:
        return _through(self, name)
