"""Live concurrency limits of the OCR and I/O pools, stored where every worker sees them.

Operators change how many activities each worker runs at once without a
redeploy. The limits are small create-only versions in the store every worker
already shares (``pools/limits/v<N>.json``, newest wins, :mod:`custody.state.versions`,
so restoring an old copy cannot roll a change back; ``pools/limits.json``, the
single object of older releases, is read while no version exists); each
worker's slot supplier
(:mod:`workers.slots`) re-reads it every ``CUSTODY_POOL_REFRESH_S`` seconds
and applies it to the running worker. A pool with no stored limit runs at its
configured default (``CUSTODY_OCR_CONCURRENCY`` engine lanes plus
``CUSTODY_OCR_PREFETCH`` documents staged ahead; ``CUSTODY_IO_CONCURRENCY``).
An OCR limit below the lanes leaves lanes idle; above, documents wait for a
lane with their staging done (``activities.engines.lanes``).
The limit applies per worker process, not per deployment. The CLI is
:mod:`starter.cli.pools`; this module stays light so workers can import it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Literal

from custody.settings import Settings
from custody.state import versions
from custody.stores import ObjectStore

Pool = Literal["ocr", "io"]
POOLS: tuple[Pool, ...] = ("ocr", "io")
LIMITS_PREFIX = "pools/limits/"
LIMITS_KEY = "pools/limits.json"  # before versions: read only while none exists
#: Each worker sizes its thread pool to this ceiling, so any limit up to it
#: can be applied live; above it would need more threads than were started.
MAX_LIMIT = 64


def read_limits(store: ObjectStore) -> dict[str, int]:
    """The operator's limits, by pool; an absent pool means 'use the default'."""
    raw = versions.latest(store, LIMITS_PREFIX, legacy=LIMITS_KEY)
    if raw is None:
        return {}
    body = json.loads(raw)
    limits = body.get("limits", {})
    return {p: int(n) for p, n in limits.items() if p in POOLS and 1 <= int(n) <= MAX_LIMIT}


def set_limit(store: ObjectStore, pool: Pool, limit: int | None) -> dict[str, int]:
    """Store ``limit`` for ``pool`` (None: back to the default); returns all limits."""
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}")
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    limits = read_limits(store)
    if limit is None:
        limits.pop(pool, None)
    else:
        limits[pool] = limit
    body = {"limits": limits, "changed_at": datetime.now(UTC).isoformat()}
    versions.append(store, LIMITS_PREFIX, json.dumps(body).encode())
    return limits


def default_limit(settings: Settings, pool: Pool) -> int:
    if pool == "ocr":  # documents held: one per engine lane, plus those staged ahead
        return settings.ocr_concurrency + settings.ocr_prefetch
    return settings.io_concurrency


def effective_limits(settings: Settings, stored: dict[str, int]) -> dict[str, int]:
    return {p: stored.get(p, default_limit(settings, p)) for p in POOLS}
