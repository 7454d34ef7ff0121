"""Admission control: one place, on the submit path every caller takes.

``starter.client.submit.submit`` asks the client's controller
(``CustodyClient.admission``) before any byte is uploaded, so the HTTP edge,
``custody submit`` and every SDK caller pass the same bounds, rates and pause.
The edge calls ``submit`` once and maps a refusal to 429 or 503; it also asks
:meth:`Admission.precheck` before reading a body, which takes nothing.

"Waiting" means accepted and not yet through OCR: a running DocumentWorkflow on
this deployment's I/O task queue whose ``CustodyState`` is accepted, staged or
validated (validated includes the few documents on an OCR slot right now).
It is measured from Temporal visibility, so every process sees every other
one's work without a shared counter, and a crashed one leaves nothing to
reconcile. Visibility lags a little, so the admissions this process made since
the last look are added by workflow ID (a union, never counted twice). Bytes
come from the intake or source object of each waiting document, looked up once.

Rates are limited per (tenant, source) and per tenant (:mod:`starter.client.rates`):
the source id is the caller's choice, so it never names a bucket on its own.
They are this process's: a long-lived edge holds them; a ``custody submit``
run starts with full buckets, and the bounds and the pause still hold for it.

Refused work raises :class:`custody.errors.AdmissionRejected` with a reason
code (``paused``, ``source_rate``, ``tenant_rate``, ``waiting_documents``,
``waiting_bytes``) and a retry-after estimated from the measured drain rate.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from temporalio.client import Client

from custody import ids
from custody.errors import AdmissionReason, AdmissionRejected
from custody.queues import SA_STATE, WORKFLOW_NAME
from custody.settings import Settings
from custody.stores import ObjectStore
from custody.stores.base import ObjectMissing
from starter.client import metrics
from starter.client.pause import is_paused
from starter.client.rates import Rates, take

__all__ = ["Admission", "AdmissionRequest", "Stats"]

PAUSED_RETRY_S = 60.0
# With no drain measured yet there is nothing to estimate from; say a minute.
UNKNOWN_DRAIN_RETRY_S = 60.0
MAX_RETRY_S = 600.0
_DRAIN_WINDOW_S = 120.0
#: The tenant and source names of work without them (the SDK's default tenant).
_NONE = "_"


class Deployment(Protocol):
    """What admission reads: Temporal visibility, the store, the settings (a ``CustodyClient``)."""

    temporal: Client
    store: ObjectStore
    settings: Settings


@dataclass(frozen=True)
class AdmissionRequest:
    """New work admission may refuse: asked before any byte is uploaded."""

    workflow_id: str
    size_bytes: int
    source_id: str | None
    tenant: str | None
    #: The caller asks for the reserved lane (an urgent document).
    priority: bool = False


@dataclass
class Stats:
    documents: int = 0
    bytes: int = 0
    oldest_age_s: float = 0.0
    drain_per_s: float = 0.0
    paused: bool = False


@dataclass
class _Snapshot:
    #: workflow id -> (bytes, start time)
    waiting: dict[str, tuple[int, datetime]] = field(default_factory=dict)
    taken: float = 0.0
    paused: bool = False


class Admission:
    """One per client (``CustodyClient.admission``); cheap checks in memory, a visibility
    query per refresh."""

    def __init__(self, client: Deployment) -> None:
        self._client = client
        self._s = client.settings
        self._snap = _Snapshot(taken=-1e9)
        self._reserved: dict[str, tuple[int, datetime, float]] = {}
        self._sizes: dict[str, int] = {}
        self._rates = Rates(self._s)
        self._drained: deque[tuple[float, int]] = deque()
        self._lock = asyncio.Lock()

    async def admit(self, request: AdmissionRequest) -> None:
        """Reserve a place for one document or raise :class:`AdmissionRejected`.

        Rates are the (tenant, source) bucket's and the tenant's.
        """
        await self.refresh()
        tenant, source = request.tenant or _NONE, request.source_id or _NONE
        # No await between the decision and the reservation: concurrent
        # requests in this process cannot both take the last place.
        try:
            self._decide(request.size_bytes, tenant, source, request.priority)
        except AdmissionRejected as err:
            metrics.ADMISSION_REJECTIONS.labels(err.reason).inc()
            raise
        self._reserved[request.workflow_id] = (
            request.size_bytes,
            datetime.now(UTC),
            time.monotonic(),
        )

    async def precheck(
        self, size: int, tenant: str, source: str | None, *, priority: bool = False
    ) -> None:
        """Refuse early, before a body is read, if :meth:`admit` would refuse now."""
        await self.refresh()
        try:
            self._decide(size, tenant, source or _NONE, priority, consume=False)
        except AdmissionRejected as err:
            metrics.ADMISSION_REJECTIONS.labels(err.reason).inc()
            raise

    def release(self, wid: str) -> None:
        """Give a reservation back (the upload or the start failed)."""
        self._reserved.pop(wid, None)

    def stats(self) -> Stats:
        waiting = self._waiting()
        oldest = min((at for _, at in waiting.values()), default=None)
        age = (datetime.now(UTC) - oldest).total_seconds() if oldest else 0.0
        return Stats(
            documents=len(waiting),
            bytes=sum(size for size, _ in waiting.values()),
            oldest_age_s=max(0.0, age),
            drain_per_s=self._drain_rate(),
            paused=self._snap.paused,
        )

    async def refresh(self, *, force: bool = False) -> Stats:
        async with self._lock:
            if force or time.monotonic() - self._snap.taken >= self._s.admission_refresh_s:
                await self._take_snapshot()
        stats = self.stats()
        _publish(stats)
        return stats

    def _decide(
        self, size: int, tenant: str, source: str, priority: bool, consume: bool = True
    ) -> None:
        if self._snap.paused:
            raise AdmissionRejected(AdmissionReason.PAUSED, PAUSED_RETRY_S)
        buckets = () if priority else self._rates.check(tenant, source)
        stats = self.stats()
        max_docs, max_bytes = self._bounds(priority)
        if stats.documents + 1 > max_docs:
            raise AdmissionRejected(
                AdmissionReason.WAITING_DOCUMENTS, self._retry(stats.documents + 1 - max_docs)
            )
        if stats.bytes + size > max_bytes:
            share = (stats.bytes + size - max_bytes) / max(1, stats.bytes / max(1, stats.documents))
            raise AdmissionRejected(AdmissionReason.WAITING_BYTES, self._retry(share))
        if consume:
            take(buckets)

    def _bounds(self, priority: bool) -> tuple[int, int]:
        docs, max_bytes = self._s.admission_max_waiting, self._s.admission_max_bytes
        if not priority:
            return docs, max_bytes
        # The reserved lane: a few places beyond the normal bound, bytes in proportion.
        extra = self._s.admission_reserved
        return docs + extra, max_bytes * (docs + extra) // docs

    def _retry(self, excess_docs: float) -> float:
        rate = self._drain_rate()
        if rate <= 0:
            return UNKNOWN_DRAIN_RETRY_S
        return min(MAX_RETRY_S, max(1.0, excess_docs / rate))

    def _drain_rate(self) -> float:
        now = time.monotonic()
        while self._drained and now - self._drained[0][0] > _DRAIN_WINDOW_S:
            self._drained.popleft()
        if not self._drained:
            return 0.0
        span = max(1.0, now - self._drained[0][0])
        return sum(n for _, n in self._drained) / span

    def _waiting(self) -> dict[str, tuple[int, datetime]]:
        merged = dict(self._snap.waiting)
        for wid, (size, at, _) in self._reserved.items():
            merged.setdefault(wid, (size, at))
        return merged

    async def _take_snapshot(self) -> None:
        rows = await self._list_waiting()
        store = self._client.store
        sizes = await asyncio.to_thread(self._sizes_of, store, [w for w, _ in rows])
        paused = await asyncio.to_thread(is_paused, store)
        now = time.monotonic()
        current = {wid: (sizes[wid], at) for wid, at in rows}
        gone = [w for w in self._snap.waiting if w not in current]
        if gone and self._snap.taken > 0:
            self._drained.append((now, len(gone)))
        for wid in gone:
            self._sizes.pop(wid, None)
        # A reservation is dropped once visibility shows it, or after a grace period.
        grace = max(5.0, 3 * self._s.admission_refresh_s)
        for wid, (_, _, made) in list(self._reserved.items()):
            if wid in current or now - made > grace:
                del self._reserved[wid]
        self._snap = _Snapshot(waiting=current, taken=now, paused=paused)

    async def _list_waiting(self) -> list[tuple[str, datetime]]:
        query = (
            f"WorkflowType = '{WORKFLOW_NAME}' AND ExecutionStatus = 'Running' "
            f"AND TaskQueue = '{self._s.io_task_queue}' "
            f"AND {SA_STATE} IN ('accepted', 'staged', 'validated')"
        )
        # Past max_waiting + reserved the answer is "full" whatever the rest is.
        limit = self._s.admission_max_waiting + self._s.admission_reserved + 1
        rows = []
        async for wf in self._client.temporal.list_workflows(query, limit=limit):
            rows.append((wf.id, wf.start_time))
        return rows

    def _sizes_of(self, store: ObjectStore, wids: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for wid in wids:
            if wid not in self._sizes:
                self._sizes[wid] = _stored_size(store, wid)
            out[wid] = self._sizes[wid]
        return out


def _stored_size(store: ObjectStore, wid: str) -> int:
    sha, tenant = ids.parse_workflow_id(wid)
    for key in (ids.intake_key(sha, tenant), ids.source_key(sha, tenant)):
        try:
            return store.size(key)
        except ObjectMissing:  # staging moves intake/ to sources/ meanwhile
            continue
    return 0


def _publish(stats: Stats) -> None:
    metrics.DOCUMENTS_WAITING.set(stats.documents)
    metrics.BYTES_WAITING.set(stats.bytes)
    metrics.QUEUE_AGE.set(stats.oldest_age_s)
    metrics.DRAIN_RATE.set(stats.drain_per_s)
    metrics.ADMISSION_PAUSED.set(1 if stats.paused else 0)
