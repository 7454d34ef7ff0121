"""Routing a new document to the GPU pool or the CPU pool by the GPU queue's backlog.

Against the real dev server: backlogs are real OCR tasks of the real document
workflow waiting on the GPU queue. Where a backlog is built, the activities
are the workflow stand-ins (tests/workflows/stand_ins.py), one of them held so
its tasks wait; the end-to-end test runs the real pipeline with two real OCR
workers, one per queue, their engine wrapped only to count its calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import pytest
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.worker import Worker

from activities.scratch import StagingArea
from custody.models import DocState
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.client import route
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from tests.helpers import CountingEngine, Rig, make_settings
from tests.workflows.stand_ins import Script, StandIns, start_document
from workers.ocr import build_ocr_worker
from workflows.document import DocumentWorkflow


@pytest.fixture(autouse=True)
def _fresh_readings() -> Iterator[None]:
    route.forget()
    yield
    route.forget()


def _client(temporal: Client, settings: Settings) -> CustodyClient:
    return CustodyClient(
        temporal=temporal, store=LocalStore(settings.objects_dir), settings=settings
    )


async def _queue(temporal: Client, queue: str) -> tuple[int, bool]:
    """The OCR queue's backlog as the server counts it, and whether any worker polls it."""
    request = DescribeTaskQueueRequest(
        namespace="default",
        task_queue=TaskQueue(name=queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        report_stats=True,
    )
    found = await temporal.workflow_service.describe_task_queue(request)
    return int(found.stats.approximate_backlog_count), len(found.pollers) > 0


async def test_without_a_gpu_queue_every_document_goes_to_the_cpu_pool(
    temporal_client: Client, temporal_address: str, tmp_path: Path
) -> None:
    """No ``CUSTODY_OCR_GPU_TASK_QUEUE``: the OCR queue is the CPU pool's, as before."""
    settings = make_settings(tmp_path, temporal_address)
    client = _client(temporal_client, settings)
    assert [await route.ocr_queue(client) for _ in range(3)] == [settings.ocr_task_queue] * 3


async def test_a_cold_gpu_queue_takes_one_document_and_the_cpu_pool_the_rest(
    temporal_client: Client, temporal_address: str, tmp_path: Path
) -> None:
    """With no GPU worker polling, one document goes to wake the pool; the next to the CPU's."""
    gpu = f"gpu-{uuid4().hex[:10]}"
    settings = make_settings(
        tmp_path, temporal_address, ocr_gpu_task_queue=gpu, ocr_route_refresh_s=60
    )
    client = _client(temporal_client, settings)
    assert await route.ocr_queue(client) == gpu
    assert await route.ocr_queue(client) == settings.ocr_task_queue


async def test_a_backed_up_gpu_queue_sends_new_documents_to_the_cpu_pool(
    temporal_client: Client, temporal_address: str, tmp_path: Path
) -> None:
    """A polled GPU queue takes documents while its backlog is under the bound, then the CPU
    pool does; the bound counts what this process sent since its last reading too."""
    stand_ins, queue, gpu = StandIns(), f"io-{uuid4().hex[:10]}", f"gpu-{uuid4().hex[:10]}"
    hold = asyncio.Event()
    scripts = [Script(hold=hold) for _ in range(3)]
    io = Worker(
        temporal_client,
        task_queue=queue,
        workflows=[DocumentWorkflow],
        activities=stand_ins.activities(),
    )
    # The GPU pool: one OCR slot, held, so the other documents' OCR tasks wait in its backlog.
    pool = Worker(
        temporal_client, task_queue=gpu, activities=[stand_ins.ocr], max_concurrent_activities=1
    )
    async with io, pool:
        handles = [
            await start_document(temporal_client, stand_ins, queue, s, ocr_queue=gpu)
            for s in scripts
        ]
        deadline = time.monotonic() + 30
        while (await _queue(temporal_client, gpu))[0] < 2:
            assert time.monotonic() < deadline, "the GPU queue's backlog never showed"
            await asyncio.sleep(0.5)
        full = make_settings(
            tmp_path, temporal_address, ocr_gpu_task_queue=gpu, ocr_gpu_max_backlog=2
        )
        assert await route.ocr_queue(_client(temporal_client, full)) == full.ocr_task_queue
        route.forget()
        roomy = full.model_copy(update={"ocr_gpu_max_backlog": 4, "ocr_route_refresh_s": 60})
        client = _client(temporal_client, roomy)
        assert [await route.ocr_queue(client) for _ in range(3)] == [gpu, gpu, roomy.ocr_task_queue]
        hold.set()
        for handle in handles:
            await handle.result()


async def test_submit_routes_to_the_gpu_pool_and_falls_back_to_the_cpu_pool(rig: Rig) -> None:
    """End to end: a document is read by the GPU pool's worker while it keeps up; with the
    GPU queue's bound at 0 the next is read by the CPU pool's; both publish."""
    gpu = f"gpu-{uuid4().hex[:10]}"
    settings = rig.settings(ocr_gpu_task_queue=gpu, ocr_route_refresh_s=0)
    cpu_engine, gpu_engine = CountingEngine(rig.engine), CountingEngine(rig.engine)
    store = LocalStore(settings.objects_dir)
    gpu_settings = settings.model_copy(update={"ocr_task_queue": gpu})
    area = StagingArea(settings.staging_path)
    gpu_worker = build_ocr_worker(rig.client, gpu_settings, store, area, gpu_engine)
    async with rig.pipeline(settings, cpu_engine, store=store) as client, gpu_worker:
        deadline = time.monotonic() + 30
        while not (await _queue(rig.client, gpu))[1]:
            assert time.monotonic() < deadline, "the GPU worker never polled"
            await asyncio.sleep(0.5)
        first = await submit(client, rig.scan(), tenant=rig.tenant)
        assert (await wait(client, first.sha256, tenant=rig.tenant)).state is DocState.PUBLISHED
        assert (gpu_engine.calls, cpu_engine.calls) == (1, 0)
        client.settings = settings.model_copy(update={"ocr_gpu_max_backlog": 0})
        second = await submit(client, rig.scan("funsd_82251504.png"), tenant=rig.tenant)
        assert (await wait(client, second.sha256, tenant=rig.tenant)).state is DocState.PUBLISHED
    assert (gpu_engine.calls, cpu_engine.calls) == (1, 1)
