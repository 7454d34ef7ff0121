"""Which OCR pool a new document goes to: the GPU pool while it keeps up, else the CPU pool.

Decided here, where documents are routed (``submit``: the SDK and the edge
alike), and never in workflow code: the chosen queue rides in the document's
input (``DocumentInput.ocr_task_queue``), so its workflow, its retries and its
replays never look at a backlog. With ``CUSTODY_OCR_GPU_TASK_QUEUE`` unset
every document goes to ``CUSTODY_OCR_TASK_QUEUE``, as before.

With it set, a document goes to the GPU queue while that queue's backlog of
OCR tasks (``DescribeTaskQueue``'s approximate count) plus the documents this
process sent there since reading it stays under ``CUSTODY_OCR_GPU_MAX_BACKLOG``;
past it, to the CPU pool, which always exists. A GPU queue with no worker
polling (the pool scaled to zero) takes one document, the one that wakes its
autoscaler (deploy/k8s/keda.yaml, activation at a backlog of 1), and the CPU
pool takes the rest until a GPU worker polls. A backlog that cannot be read
sends the document to the CPU pool. Readings are shared by every client of
the deployment in this process and refreshed at most every
``CUSTODY_OCR_ROUTE_REFRESH_S``, so a burst costs one call, not one per document.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.service import RPCError

from starter.client.connect import CustodyClient


@dataclass
class _Reading:
    """One reading of the GPU queue, and the documents sent there since."""

    at: float
    backlog: int
    polled: bool
    sent: int = 0


_READINGS: dict[tuple[str, str, str], _Reading] = {}


async def ocr_queue(client: CustodyClient) -> str:
    """The OCR task queue for a new document of ``client``'s deployment."""
    settings = client.settings
    gpu = settings.ocr_gpu_task_queue
    if not gpu:
        return settings.ocr_task_queue
    key = (settings.temporal_address, settings.temporal_namespace, gpu)
    reading = _READINGS.get(key)
    if reading is None or time.monotonic() - reading.at >= settings.ocr_route_refresh_s:
        reading = await _read(client, gpu)
        if reading is None:
            return settings.ocr_task_queue  # the backlog is unknown: the pool that always exists
        _READINGS[key] = reading
    room = settings.ocr_gpu_max_backlog if reading.polled else 1
    if reading.backlog + reading.sent >= room:
        return settings.ocr_task_queue
    reading.sent += 1
    return gpu


async def _read(client: CustodyClient, queue: str) -> _Reading | None:
    """The GPU queue's OCR backlog and whether any worker polls it; None if unreadable."""
    request = DescribeTaskQueueRequest(
        namespace=client.settings.temporal_namespace,
        task_queue=TaskQueue(name=queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        report_stats=True,
    )
    try:
        found = await client.temporal.workflow_service.describe_task_queue(request)
    except RPCError:
        return None
    backlog = int(found.stats.approximate_backlog_count)
    return _Reading(at=time.monotonic(), backlog=backlog, polled=len(found.pollers) > 0)


def forget() -> None:
    """Drop every reading (tests, and a process that changes its settings)."""
    _READINGS.clear()
