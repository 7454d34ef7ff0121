"""A document as a caller hands it to ``submit``: a path, bytes, or a file already hashed.

A file is never read whole: once to hash it, once to upload it; a
:class:`Hashed` file (the edge's staged upload, hashed as it streamed in) only
once, to upload it. Over the byte limit is ``TOO_LARGE`` before any upload.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from custody import ids
from custody.errors import Code, DocumentRejected

__all__ = ["Hashed", "measured", "opened"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Hashed:
    """A file whose SHA-256 and size its caller measured while writing it (the edge's
    staged upload), so ``submit`` reads it once, to upload it, instead of hashing it again.

    The hash is not taken on trust: staging re-hashes the stored bytes against
    it, and a mismatch is quarantined ``HASH_MISMATCH``, never published under it.
    """

    path: Path
    sha256: str
    size: int


class opened:
    """A seekable binary stream over a path or bytes (files are never read whole)."""

    def __init__(self, document: str | Path | bytes | Hashed) -> None:
        self._document = document
        self._stream: BinaryIO | None = None

    def __enter__(self) -> BinaryIO:
        if isinstance(self._document, bytes):
            self._stream = io.BytesIO(self._document)
        elif isinstance(self._document, Hashed):
            self._stream = self._document.path.open("rb")
        else:
            self._stream = Path(self._document).open("rb")
        return self._stream

    def __exit__(self, *exc: object) -> None:
        if self._stream is not None:
            self._stream.close()


def measured(
    document: str | Path | bytes | Hashed, src: BinaryIO, max_bytes: int
) -> tuple[str, int]:
    """The SHA-256 and size: as a :class:`Hashed` caller measured them, else read once."""
    if not isinstance(document, Hashed):
        return _hash_stream(src, max_bytes)
    if document.size > max_bytes:
        raise DocumentRejected(Code.TOO_LARGE, f"more than {max_bytes} bytes")
    return ids.check_sha256(document.sha256), document.size


def _hash_stream(src: BinaryIO, max_bytes: int) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    while chunk := src.read(_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise DocumentRejected(Code.TOO_LARGE, f"more than {max_bytes} bytes")
        digest.update(chunk)
    return digest.hexdigest(), size
