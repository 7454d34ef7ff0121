"""The operator's pause: one flag every process that submits to this store obeys.

``custody admission pause`` sets it, ``resume`` lifts it; admission
(``starter.client.admission``) reads it on every refresh, so the edge answers
503 and ``custody submit`` and the SDK raise ``ADMISSION_PAUSED`` within
``CUSTODY_ADMISSION_REFRESH_S``. It is kept as create-only versions
(``custody.state.versions``), so an old copy put back cannot un-pause.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from custody.state import versions
from custody.stores import ObjectStore

__all__ = ["STATE_KEY", "STATE_PREFIX", "is_paused", "set_paused"]

STATE_PREFIX = "admission/state/"
STATE_KEY = "admission/state.json"  # before versions: read only while none exists


def set_paused(store: ObjectStore, paused: bool) -> None:
    """Pause or resume admission for every process submitting to this store."""
    body = {"paused": paused, "changed_at": datetime.now(UTC).isoformat()}
    versions.append(store, STATE_PREFIX, json.dumps(body).encode())


def is_paused(store: ObjectStore) -> bool:
    raw = versions.latest(store, STATE_PREFIX, legacy=STATE_KEY)
    return raw is not None and bool(json.loads(raw)["paused"])
