"""The object-store contract every backend honours.

Keys are ``/``-separated relative paths built by ``custody.ids``; a key never
contains ``..``, a leading ``/`` or an empty segment. Values are bytes.

The one operation the pipeline's correctness rests on is
:meth:`ObjectStore.create`: an atomic *create-if-absent*. Two writers racing on
one key: exactly one gets ``True``, the other ``False``, and the stored bytes
are the winner's, whole. That is how "one published record per document" holds
without a database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Protocol, runtime_checkable

# The store's errors live with every other exception; imported here by their old names.
from custody.errors import ObjectExists as ObjectExists
from custody.errors import ObjectMissing as ObjectMissing
from custody.errors import StoreError as StoreError
from custody.errors import StoreUnavailable as StoreUnavailable


@runtime_checkable
class ObjectStore(Protocol):
    def create(self, key: str, data: bytes) -> bool:
        """Store ``data`` at ``key`` only if absent. True if created, False if it existed."""
        ...

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        """Like :meth:`create`, streaming from an open binary file (not held in memory)."""
        ...

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` at ``key``, replacing what is there (scratch areas only)."""
        ...

    def get(self, key: str) -> bytes:
        """The object's bytes; :class:`ObjectMissing` if absent."""
        ...

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        """Stream the object into ``dst``; returns the byte count."""
        ...

    def exists(self, key: str) -> bool: ...

    def size(self, key: str) -> int:
        """Byte length; :class:`ObjectMissing` if absent."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; absent is not an error."""
        ...

    def list(self, prefix: str) -> Iterator[str]:
        """Keys starting with ``prefix``, in lexical order."""
        ...


def check_key(key: str) -> str:
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"invalid object key {key!r}")
    return key
