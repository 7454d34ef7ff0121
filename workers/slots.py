"""Activity slots whose limit an operator changes while the worker runs.

The SDK asks a slot supplier for a permit before each poll and gives it back
when the task ends, so a supplier that counts permits against a limit it
re-reads from the store (``custody pools set``) changes a running worker's
concurrency without a restart. Running tasks are never interrupted: lowering
the limit stops new reservations until enough running ones finish.

Activity polls are capped at one per worker: a poll holds its permit while it
waits, so with many pollers an idle worker would hold that many permits and a
lowered limit would only bite after they lapse (a long poll is about a
minute). Even so the SDK keeps up to two permits reserved while idle, so after
a lower limit up to two tasks may still start before it bites. One poller
dispatches well above any OCR or I/O pace.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable

import structlog
from temporalio.worker import (
    CustomSlotSupplier,
    FixedSizeSlotSupplier,
    PollerBehaviorSimpleMaximum,
    SlotMarkUsedContext,
    SlotPermit,
    SlotReleaseContext,
    SlotReserveContext,
    WorkerTuner,
)

from custody.settings import Settings
from custody.state.pools import MAX_LIMIT, Pool, default_limit, read_limits
from custody.stores import ObjectStore

log = structlog.get_logger("custody.worker")

ACTIVITY_POLLERS = PollerBehaviorSimpleMaximum(maximum=1)
#: Workflow-task, local-activity and Nexus slots stay at the SDK's own default.
_FIXED_SLOTS = 100


class LiveSlotSupplier(CustomSlotSupplier):
    """Permits up to ``limit``, where ``read_limit()`` is consulted every ``refresh_s``."""

    def __init__(
        self, pool: str, read_limit: Callable[[], int], refresh_s: float, initial: int
    ) -> None:
        self.pool, self._read, self._refresh_s = pool, read_limit, refresh_s
        self._limit = max(1, min(MAX_LIMIT, initial))
        self._held = self._used = 0
        # release_slot may come from the SDK's own threads: the count is
        # guarded by a thread lock and waiters are woken through the loop.
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._watcher: asyncio.Task[None] | None = None

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def used(self) -> int:
        return self._used

    async def reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit:
        wake = self._bind()
        while True:
            with self._lock:
                if self._held < self._limit:
                    self._held += 1
                    return SlotPermit()
                wake.clear()
            await wake.wait()

    def try_reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit | None:
        with self._lock:
            if self._held < self._limit:
                self._held += 1
                return SlotPermit()
        return None

    def mark_slot_used(self, ctx: SlotMarkUsedContext) -> None:
        with self._lock:
            self._used += 1

    def release_slot(self, ctx: SlotReleaseContext) -> None:
        with self._lock:
            self._held -= 1
            if ctx.slot_info is not None:
                self._used -= 1
        self._notify()

    def set_limit(self, limit: int) -> None:
        if limit != self._limit:
            log.info("pool_limit_changed", pool=self.pool, old=self._limit, new=limit)
            self._limit = limit
            self._notify()

    def _bind(self) -> asyncio.Event:
        if self._wake is None:
            self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
            # The watcher holds only a weak reference: it ends with the supplier.
            self._watcher = self._loop.create_task(_watch(weakref.ref(self), self._refresh_s))
        return self._wake

    def _notify(self) -> None:
        if self._loop is not None and self._wake is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)

    async def refresh(self) -> None:
        """Re-read the limit; a store that cannot be read leaves it as it is."""
        try:
            self.set_limit(max(1, min(MAX_LIMIT, await asyncio.to_thread(self._read))))
        except Exception as err:
            log.warning("pool_limit_unreadable", pool=self.pool, error=type(err).__name__)


async def _watch(ref: weakref.ref[LiveSlotSupplier], every_s: float) -> None:
    # Polled rather than pushed: the store is the only thing edges, the CLI
    # and workers all share, and a few seconds of lag is fine for an operator.
    while (supplier := ref()) is not None:
        await supplier.refresh()
        del supplier
        await asyncio.sleep(every_s)


def pool_supplier(settings: Settings, store: ObjectStore, pool: Pool) -> LiveSlotSupplier:
    fallback = default_limit(settings, pool)

    def read() -> int:
        return read_limits(store).get(pool, fallback)

    try:
        initial = read()
    except Exception:  # the store is down at start: the default, re-read later
        initial = fallback
    return LiveSlotSupplier(pool, read, settings.pool_refresh_s, initial)


def live_tuner(activities: LiveSlotSupplier) -> WorkerTuner:
    """The worker's tuner: live activity slots, fixed slots for the rest."""
    fixed = FixedSizeSlotSupplier(_FIXED_SLOTS)
    return WorkerTuner.create_composite(
        workflow_supplier=fixed,
        activity_supplier=activities,
        local_activity_supplier=fixed,
        nexus_supplier=fixed,
    )
