"""What ``custody bench scale`` watches while a round runs.

- the OCR task queue's backlog, as Temporal reports it (``DescribeTaskQueue``
  with stats: the same approximate count and age KEDA's Temporal scaler reads);
- each worker's resident memory and CPU, its helper processes included (the
  Tesseract servers and the inspection zygote are children of the worker);
- one document's seconds split from its workflow history: waiting in the OCR
  queue, inside the OCR activity, and everything else.

Histories are read for event types and timestamps only; payloads stay sealed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from temporalio.api.enums.v1 import EventType, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

from custody import ids
from starter.client.connect import CustodyClient

_OCR_ACTIVITY = "custody.ocr"
_EVERY_S = 0.5
_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Probe:
    """Samples the OCR queue and the workers' memory until the ``async with`` ends."""

    def __init__(self, client: CustodyClient, pids: dict[str, int]) -> None:
        self._client, self._pids = client, pids
        self._backlog: list[tuple[int, float]] = []
        self._rss: dict[str, float] = dict.fromkeys(pids, 0.0)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Probe:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _sample(self) -> None:
        while True:
            self._backlog.append(await self._queue_stats())
            for name, pid in self._pids.items():
                self._rss[name] = max(self._rss[name], tree_rss_mb(pid))
            await asyncio.sleep(_EVERY_S)

    async def _queue_stats(self) -> tuple[int, float]:
        s = self._client.settings
        resp = await self._client.temporal.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=s.temporal_namespace,
                task_queue=TaskQueue(name=s.ocr_task_queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
                report_stats=True,
            )
        )
        age = resp.stats.approximate_backlog_age.ToTimedelta().total_seconds()
        return resp.stats.approximate_backlog_count, age

    def queue(self) -> dict[str, Any]:
        counts = [c for c, _ in self._backlog] or [0]
        ages = [a for _, a in self._backlog] or [0.0]
        return {"peak_backlog": max(counts), "peak_age_s": round(max(ages), 2)}

    def rss(self) -> dict[str, float]:
        return {name: round(mb, 1) for name, mb in self._rss.items()}


async def history_split(client: CustodyClient, sha256: str, tenant: str) -> dict[str, float]:
    """One document's seconds: in the OCR queue, in the OCR activity, and the rest."""
    handle = client.temporal.get_workflow_handle(ids.workflow_id(sha256, tenant))
    events = (await handle.fetch_history()).events
    at = {e.event_id: e.event_time.ToDatetime() for e in events}
    ocr_ids = {
        e.event_id
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == _OCR_ACTIVITY
    }
    queued = ran = 0.0
    for e in events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            scheduled = e.activity_task_started_event_attributes.scheduled_event_id
            if scheduled in ocr_ids:
                queued += (at[e.event_id] - at[scheduled]).total_seconds()
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attrs = e.activity_task_completed_event_attributes
            if attrs.scheduled_event_id in ocr_ids:
                ran += (at[e.event_id] - at[attrs.started_event_id]).total_seconds()
    total = (at[events[-1].event_id] - at[events[0].event_id]).total_seconds()
    return {"queue_wait_s": queued, "ocr_s": ran, "other_s": total - queued - ran, "total_s": total}


def _tree(pid: int) -> list[int]:
    """``pid`` and every descendant, from /proc (helpers are children of the worker)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += parents.get(current, [])
    return found


def tree_rss_mb(pid: int) -> float:
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1])
    return total * _PAGE / (1 << 20)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of the tree now, plus what its reaped children used."""
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the name.
            total += sum(int(f) for f in fields[11:15])
    return total / _TICKS
