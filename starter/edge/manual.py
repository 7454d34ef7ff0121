"""The manual lane: uploads past the admission bounds, parked for an operator.

With ``CUSTODY_ADMISSION_MANUAL_LANE=1`` the edge does not refuse a document
that only failed the waiting-documents or waiting-bytes bound: it keeps the
bytes under ``manual/`` in the object store and answers ``202`` with state
``manual``. No workflow runs and no OCR slot is used until an operator
releases it (``custody admission release SHA``), which submits it as usual,
or drops it. Refusals for other reasons (paused, a source over its rate) are
not parked: those are the caller's to retry.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custody import ids
from custody.errors import AdmissionReason
from custody.stores import ObjectStore
from starter.edge.upload import Staged

PREFIX = "manual/"
#: The bounds whose overflow the lane takes; the rest stay refusals.
LANE_REASONS = frozenset({AdmissionReason.WAITING_DOCUMENTS, AdmissionReason.WAITING_BYTES})
_NO_TENANT = "_"


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
        "parked_at": datetime.now(UTC).isoformat(),
    }
    store.create(f"{base}.json", json.dumps(note).encode())
    return created


def park_staged(
    store: ObjectStore, staged: Staged, tenant: str, opts: dict[str, Any], reason: str
) -> None:
    """:func:`park` for the edge's staged upload and its parsed headers."""
    park(
        store,
        staged.path,
        sha256=staged.sha256,
        tenant=tenant,
        source_id=opts["source_id"],
        media_type=staged.media_type,
        reason=reason,
    )


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
