"""The edge's upload mechanics: a streamed body to a private file, and idempotency.

The body is written to a random 0600 file in this process's 0700 staging
folder while it is hashed and counted, so memory stays flat whatever the
size; every check that can be made on the stream (declared vs actual length,
the byte limit, magic bytes against the declared type, the minimum rate) is
made before anything is submitted.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request

from activities.scratch import StagingArea
from custody import ids
from custody.doctypes import TYPE_NAME
from custody.errors import Code, CustodyError, UsageError
from custody.errors import UploadError as UploadError
from custody.settings import Settings
from custody.state.rules import get_policy, known_type
from custody.stores import ObjectStore
from starter.edge.inflight import Ticket

MEDIA_TYPES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"II+\x00", "image/tiff"),
    (b"MM\x00+", "image/tiff"),
)
SUPPORTED = frozenset(t for _, t in MEDIA_TYPES)
_HEAD = 8
# An integer header: 1 to 18 ASCII digits (any larger count is past every limit).
_DIGITS = re.compile(r"[0-9]{1,18}")


@dataclass
class Staged:
    """A body written to the staging folder, hashed and counted on the way (the one hash)."""

    path: Path
    sha256: str
    size: int
    media_type: str


@dataclass(frozen=True)
class UploadOptions:
    """What an upload's headers say, checked before a byte of the body is read."""

    media_type: str
    #: ``Content-Length``; None when the body is chunked.
    length: int | None
    idempotency_key: str | None
    source_id: str | None
    #: ``Custody-Priority: high``; the reserved lane only for tenants allowed it.
    priority: bool
    document_type: str | None


@dataclass(frozen=True)
class Pace:
    """The slowest body the edge waits for: ``min_bytes`` in every ``window_s`` seconds."""

    min_bytes: int
    window_s: float


async def paced(chunks: AsyncIterator[bytes], pace: Pace) -> AsyncIterator[bytes]:
    """``chunks``, cut off with 408 BODY_TOO_SLOW when a window ends short of its bytes.

    A trickle of a few bytes a second would otherwise hold a connection, a
    staging file and an in-flight place for as long as the client likes.
    """
    loop = asyncio.get_running_loop()
    window_end, got = loop.time() + pace.window_s, 0
    while True:
        try:
            async with asyncio.timeout_at(window_end):
                chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise UploadError(
                408, Code.BODY_TOO_SLOW, f"under {pace.min_bytes} bytes in {pace.window_s} s"
            ) from None
        got += len(chunk)
        if got >= pace.min_bytes:  # this window is met: the next starts now
            window_end, got = loop.time() + pace.window_s, 0
        yield chunk


async def json_body(request: Request, cap: int, what: str) -> Any:
    """A small JSON body (``what``: "a decision"), read to ``cap``: 413 past it, 400 if not JSON."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise UploadError(413, Code.TOO_LARGE, f"{what} is at most {cap} bytes")
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > cap:
            raise UploadError(413, Code.TOO_LARGE, f"{what} is at most {cap} bytes")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        raise UploadError(400, Code.BAD_REQUEST, "the body must be JSON") from None


async def stage_body(
    chunks: AsyncIterator[bytes],
    area: StagingArea,
    *,
    declared: int | None,
    max_bytes: int,
    ticket: Ticket | None = None,
) -> Staged:
    """Write the body to a fresh private file; the caller deletes ``path`` on every path.

    The file lives in this process's staging folder (``activities.scratch``),
    so the sweeper removes it should the process die mid-upload.
    """
    fd, path = area.new_file()  # mode 0600, random name
    digest, size, head = hashlib.sha256(), 0, b""
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise UploadError(413, Code.TOO_LARGE, f"more than {max_bytes} bytes")
                if ticket is not None:
                    ticket.hold(size)
                if len(head) < _HEAD:
                    head += chunk[: _HEAD - len(head)]
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    staged = Staged(path=path, sha256=digest.hexdigest(), size=size, media_type=sniff(head))
    if declared is not None and declared != size:
        path.unlink(missing_ok=True)
        raise UploadError(
            400, Code.LENGTH_MISMATCH, f"Content-Length {declared}, body {size} bytes"
        )
    return staged


def sniff(head: bytes) -> str:
    """The media type the first bytes declare, or '' (the extension is never trusted)."""
    return next((t for magic, t in MEDIA_TYPES if head.startswith(magic)), "")


#: Custody-Document-Type: the submitter names the document's type (else it is classified):
#: a type's name (built in or configured, custody.doctypes), checked for the tenant in
#: ``known_document_type`` once the tenant is known.


def read_options(h: Mapping[str, str], settings: Settings) -> UploadOptions:
    """Everything the headers say, checked before a byte of the body is read."""
    media_type = h.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in SUPPORTED:
        raise UploadError(
            415, Code.UNSUPPORTED_TYPE, f"Content-Type must be one of {sorted(SUPPORTED)}"
        )
    length = _int_header(h.get("content-length"), "Content-Length", 0)
    if length is not None and length > settings.limits.max_bytes:
        raise UploadError(413, Code.TOO_LARGE, f"more than {settings.limits.max_bytes} bytes")
    pages = _int_header(h.get("custody-page-count"), "Custody-Page-Count", 1)
    if pages is not None and pages > settings.limits.max_pages:
        raise UploadError(413, Code.PAGE_LIMIT, f"more than {settings.limits.max_pages} pages")
    key = h.get("idempotency-key")
    if key is not None and not (0 < len(key) <= 255 and key.isprintable()):
        raise UploadError(
            400, Code.BAD_IDEMPOTENCY_KEY, "Idempotency-Key must be 1-255 printable chars"
        )
    source_id = h.get("custody-source-id")
    try:
        ids.check_source_id(source_id)
    except CustodyError:
        raise UploadError(
            400, Code.BAD_SOURCE_ID, "Custody-Source-Id must be an identifier"
        ) from None
    priority = h.get("custody-priority", "").lower() == "high"
    doc_type = h.get("custody-document-type")
    if doc_type is not None and re.fullmatch(TYPE_NAME, doc_type) is None:
        raise UploadError(400, Code.BAD_HEADER, f"Custody-Document-Type must match {TYPE_NAME}")
    return UploadOptions(media_type, length, key, source_id, priority, doc_type)


def known_document_type(store: ObjectStore, tenant: str, name: str | None) -> None:
    """A well-formed type the tenant's fields policy does not know is 422 UNKNOWN_TYPE."""
    if name is None:
        return
    try:
        known_type(get_policy(store, tenant), name)
    except UsageError as err:
        raise UploadError(422, Code.UNKNOWN_TYPE, err.detail) from None


def _int_header(value: str | None, name: str, minimum: int) -> int | None:
    # ASCII digits only: str.isdigit() passes "²", which int() then refuses
    # (a 500), and int() reads "٣" as 3. A bounded length, so int() never
    # parses thousands of digits (Python refuses past 4300: another 500).
    if value is None:
        return None
    if _DIGITS.fullmatch(value) is None or int(value) < minimum:
        raise UploadError(400, Code.BAD_HEADER, f"{name} must be an integer >= {minimum}")
    return int(value)


class Idempotency:
    """Answers to ``Idempotency-Key`` requests, per tenant, in the object store.

    The client's key is hashed into the object key: it is the client's free
    text, so it never becomes part of a path or a log line.
    """

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def _key(self, tenant: str, key: str) -> str:
        return f"idempotency/{tenant}/{hashlib.sha256(key.encode()).hexdigest()}.json"

    def get(self, tenant: str, key: str) -> dict[str, Any] | None:
        obj = self._key(tenant, key)
        if not self._store.exists(obj):
            return None
        record: dict[str, Any] = json.loads(self._store.get(obj))
        return record

    def remember(self, tenant: str, key: str, body_sha256: str, answer: dict[str, Any]) -> None:
        record = {"body_sha256": body_sha256, "status": 202, "answer": answer}
        # Create-if-absent: of two racing first requests, the first answer stays.
        self._store.create(self._key(tenant, key), json.dumps(record).encode())
