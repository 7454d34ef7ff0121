"""The intake SLO as the edge sees it: which finished documents became searchable in time.

A document is searchable once its workflow closes as published; it met the
SLO when that happened within ``CUSTODY_INTAKE_SLO_S`` of its acceptance (the
workflow's start). Closed workflows are read from Temporal visibility, only
those closed since the last look, so every edge counts the whole deployment's
documents (each edge from its own start) without a shared counter. Documents
still waiting past the SLO are misses in the making: ``custody_queue_age_seconds``
shows them first.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from temporalio.common import SearchAttributeKey

from custody.models import DocState
from custody.queues import SA_STATE, WORKFLOW_NAME
from starter.edge import metrics

if TYPE_CHECKING:
    from starter.client.connect import CustodyClient

_STATE = SearchAttributeKey.for_keyword(SA_STATE)
# Visibility records a close a moment after it happens: look back a little and
# remember what was counted, so a late record is neither missed nor counted twice.
_OVERLAP = timedelta(seconds=30)


class SloTracker:
    def __init__(self, client: CustodyClient) -> None:
        self._client = client
        self._since = datetime.now(UTC)
        self._seen: dict[str, datetime] = {}
        self._lock = asyncio.Lock()
        self._taken = -1e9  # monotonic time of the last visibility query
        self.published = self.within = 0
        metrics.INTAKE_SLO.set(client.settings.intake_slo_s)

    @property
    def share(self) -> float | None:
        """Published documents searchable within the SLO, as a share; None before any."""
        return self.within / self.published if self.published else None

    async def refresh(self, *, force: bool = False) -> None:
        """Count what closed since the last look, at most once per ``admission_refresh_s``."""
        # Each look is a visibility query: every scrape of /metrics must not cost one.
        async with self._lock:
            now = time.monotonic()
            if force or now - self._taken >= self._client.settings.admission_refresh_s:
                await self._count_closed()
                self._taken = now
        if self.share is not None:
            metrics.SLO_SHARE.set(self.share)

    async def _count_closed(self) -> None:
        s = self._client.settings
        after = (self._since - _OVERLAP).isoformat().replace("+00:00", "Z")
        query = (
            f"WorkflowType = '{WORKFLOW_NAME}' AND TaskQueue = '{s.io_task_queue}' "
            f"AND ExecutionStatus != 'Running' AND CloseTime > '{after}'"
        )
        newest = self._since
        async for wf in self._client.temporal.list_workflows(query):
            if wf.close_time is None or wf.id in self._seen:
                continue
            self._seen[wf.id] = wf.close_time
            newest = max(newest, wf.close_time)
            state = wf.typed_search_attributes.get(_STATE)
            if state != DocState.PUBLISHED.value:
                continue
            took = (wf.close_time - wf.start_time).total_seconds()
            within = took <= s.intake_slo_s
            self.published += 1
            self.within += within
            metrics.SEARCHABLE.labels("true" if within else "false").inc()
        self._since = newest
        # Forget what can no longer come back through the overlap window.
        cutoff = newest - 2 * _OVERLAP
        self._seen = {w: at for w, at in self._seen.items() if at >= cutoff}
