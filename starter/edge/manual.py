"""The manual lane: uploads past the admission bounds, parked for an operator.

With ``CUSTODY_ADMISSION_MANUAL_LANE=1`` the edge does not refuse a document
that only failed the waiting-documents or waiting-bytes bound: it keeps the
bytes under ``manual/`` in the object store and answers ``202`` with state
``manual``. No workflow runs and no OCR slot is used until an operator
releases it (``custody admission release SHA``), which submits it as usual,
or drops it. Refusals for other reasons (paused, a source over its rate) are
not parked: those are the caller's to retry. Each tenant's share of the lane
is bounded (``CUSTODY_ADMISSION_MANUAL_MAX_PER_TENANT``, ``..._MAX_BYTES_PER_TENANT``);
past it the upload is refused 429 ``MANUAL_LANE_FULL``.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custody import ids
from custody.errors import AdmissionReason, Code, UploadError
from custody.stores import ObjectStore
from starter.edge.upload import Staged, UploadOptions

PREFIX = "manual/"
#: The bounds whose overflow the lane takes; the rest stay refusals.
LANE_REASONS = frozenset({AdmissionReason.WAITING_DOCUMENTS, AdmissionReason.WAITING_BYTES})
_NO_TENANT = "_"
#: A full lane empties only as an operator releases or drops: tell clients to wait long.
FULL_RETRY_S = 60.0


def _base(sha256: str, tenant: str | None) -> str:
    return f"{PREFIX}{tenant or _NO_TENANT}/{sha256}"


def park(
    store: ObjectStore,
    path: Path,
    *,
    sha256: str,
    tenant: str | None,
    source_id: str | None,
    media_type: str,
    reason: str,
    document_type: str | None = None,
) -> bool:
    """Keep the staged file and a small note; False when these bytes were already parked."""
    base = _base(sha256, tenant)
    with path.open("rb") as src:
        created = store.create_from_file(f"{base}.bin", src)
    note = {
        "sha256": sha256,
        "tenant": tenant,
        "source_id": source_id,
        "media_type": media_type,
        "size_bytes": path.stat().st_size,
        "reason": reason,
        "document_type": document_type,
        "parked_at": datetime.now(UTC).isoformat(),
    }
    store.create(f"{base}.json", json.dumps(note).encode())
    return created


class Lane:
    """The edge's way into the lane, bounded per tenant in documents and bytes.

    Without a bound the lane is an unbounded queue on the store for anyone
    whose uploads the admission bounds refuse. A lock keeps two parks of one
    process from both taking the last place.
    """

    def __init__(self, store: ObjectStore, max_documents: int, max_bytes: int) -> None:
        self.store, self.max_documents, self.max_bytes = store, max_documents, max_bytes
        self._lock = asyncio.Lock()

    async def park(self, staged: Staged, tenant: str, opts: UploadOptions, reason: str) -> None:
        """Park the edge's staged upload; 429 MANUAL_LANE_FULL when the tenant's share is full."""
        async with self._lock:
            await asyncio.to_thread(self._park, staged, tenant, opts, reason)

    def _park(self, staged: Staged, tenant: str, opts: UploadOptions, reason: str) -> None:
        notes = tenant_notes(self.store, tenant)
        again = any(n["sha256"] == staged.sha256 for n in notes)  # already parked: no new room
        size = sum(int(n["size_bytes"]) for n in notes) + staged.size
        if not again and (len(notes) >= self.max_documents or size > self.max_bytes):
            raise UploadError(
                429, Code.MANUAL_LANE_FULL, "the manual lane is full for this tenant", FULL_RETRY_S
            )
        park(
            self.store,
            staged.path,
            sha256=staged.sha256,
            tenant=tenant,
            source_id=opts.source_id,
            media_type=staged.media_type,
            reason=reason,
            document_type=opts.document_type,
        )


def tenant_notes(store: ObjectStore, tenant: str) -> list[dict[str, Any]]:
    """The notes of one tenant's parked documents."""
    keys = store.list(f"{PREFIX}{tenant}/")
    return [json.loads(store.get(k)) for k in keys if k.endswith(".json")]


def answer(sha256: str) -> dict[str, Any]:
    """The edge's 202 body for a parked upload: no workflow (yet)."""
    return {"sha256": sha256, "state": "manual", "workflow_id": None, "deduplicated": False}


def parked(store: ObjectStore) -> list[dict[str, Any]]:
    """Every parked document's note, oldest first."""
    notes = [json.loads(store.get(k)) for k in store.list(PREFIX) if k.endswith(".json")]
    return sorted(notes, key=lambda n: str(n["parked_at"]))


def note(store: ObjectStore, sha256: str, tenant: str | None) -> dict[str, Any]:
    """A parked document's note; :class:`ObjectMissing` when it is not parked."""
    ids.check_sha256(sha256)
    body: dict[str, Any] = json.loads(store.get(f"{_base(sha256, tenant)}.json"))
    return body


def take(store: ObjectStore, sha256: str, tenant: str | None) -> tuple[bytes, dict[str, Any]]:
    """A parked document's bytes and note (the caller submits, then :func:`drop`)."""
    ids.check_sha256(sha256)
    base = _base(sha256, tenant)
    return store.get(f"{base}.bin"), json.loads(store.get(f"{base}.json"))


def drop(store: ObjectStore, sha256: str, tenant: str | None) -> None:
    base = _base(sha256, tenant)
    store.delete(f"{base}.bin")
    store.delete(f"{base}.json")
