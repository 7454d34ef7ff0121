"""Fair scheduling on the dev server (fairness on, one partition): the OCR queue's order.

The real workflow and server; the activities are stand-ins (tests/workflows/stand_ins.py)
so only the order in which the OCR queue hands out tasks is measured. A backlog
is built while no OCR worker polls, then one worker with one slot drains it.
The backlog-aware weight (custody.queues.backlog_weight) is counted from real
visibility (starter.client.backlog).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from uuid import uuid4

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.worker import Worker

from custody.models import DocState, DocumentResult, OcrInput, OcrResult
from custody.queues import (
    FAIR_SHARE_DOCS,
    MIN_FAIRNESS_WEIGHT,
    PRIORITY_RESERVED,
    SA_TENANT,
    WORKFLOW_NAME,
    backlog_weight,
)
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.client import backlog
from starter.client.connect import CustodyClient
from starter.client.read import list_documents
from tests.workflows.stand_ins import Script, StandIns, start_document
from workers.versioning import WORKFLOWS
from workflows.document import DocumentWorkflow


class Desk:
    """An I/O queue with a worker, and an OCR queue nobody polls until :meth:`drain`."""

    def __init__(self, client: Client) -> None:
        self.client, self.stand_ins = client, StandIns()
        q = uuid4().hex[:10]
        self.io, self.ocr = f"fair-io-{q}", f"fair-ocr-{q}"
        self.order: list[str] = []  # sha256 of each OCR task, in the order they started
        self.handles: list[WorkflowHandle[DocumentWorkflow, DocumentResult]] = []

    async def start(
        self, tenant: str, priority: int | None = None, weight: float | None = None
    ) -> str:
        """Start one document and wait until its OCR task is queued; its SHA-256."""
        script = Script()
        handle = await start_document(
            self.client,
            self.stand_ins,
            self.io,
            script,
            tenant=tenant,
            ocr_queue=self.ocr,
            priority=priority,
            fairness_weight=weight,
        )
        self.handles.append(handle)
        await _until_ocr_scheduled(handle)
        return next(sha for sha, s in self.stand_ins.scripts.items() if s is script)

    async def drain(self) -> None:
        """One OCR worker, one slot: the backlog drains in the order the server hands it out."""

        @activity.defn(name="custody.ocr")
        async def ocr(inp: OcrInput) -> OcrResult:
            self.order.append(inp.sha256)
            await asyncio.sleep(0.05)
            return await self.stand_ins.ocr(inp)

        async with Worker(
            self.client, task_queue=self.ocr, activities=[ocr], max_concurrent_activities=1
        ):
            results = [await h.result() for h in self.handles]
        assert all(r.state is DocState.PUBLISHED for r in results)


async def _until_ocr_scheduled(handle: WorkflowHandle[DocumentWorkflow, DocumentResult]) -> None:
    for _ in range(200):
        desc = await handle.describe()
        pending = desc.raw_description.pending_activities
        if any(p.activity_type.name == "custody.ocr" for p in pending):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("OCR never scheduled")


@asynccontextmanager
async def desk(client: Client) -> AsyncIterator[Desk]:
    d = Desk(client)
    async with Worker(
        client,
        task_queue=d.io,
        workflows=WORKFLOWS,
        activities=[a for a in d.stand_ins.activities() if a != d.stand_ins.ocr],
    ):
        yield d


async def test_fairness_other_tenant_starts_before_backlog_drains(temporal_client: Client) -> None:
    """Tenant B's one document, queued after tenant A's ten, starts OCR among the first
    three instead of eleventh: tenants share the queue, not first come first served
    (the server may already hold the oldest task for the next poll)."""
    async with desk(temporal_client) as d:
        for _ in range(10):
            await d.start("tenant-a")
        b = await d.start("tenant-b")
        await d.drain()
    assert len(d.order) == 11
    assert d.order.index(b) <= 2, d.order


async def test_fairness_reserved_lane_goes_first_in_ocr(temporal_client: Client) -> None:
    """A reserved-lane document (priority 1) queued last by the same busy tenant starts
    first, or second when the server already held the oldest task for the next poll."""
    async with desk(temporal_client) as d:
        for _ in range(6):
            await d.start("tenant-a")
        urgent = await d.start("tenant-a", priority=PRIORITY_RESERVED)
        await d.drain()
    assert d.order.index(urgent) <= 1, d.order


def test_fairness_weight_falls_with_backlog() -> None:
    """Up to its fair share a tenant's documents weigh 1; past it, share / backlog, floored."""
    assert backlog_weight(0) == backlog_weight(FAIR_SHARE_DOCS) == 1.0
    assert backlog_weight(4 * FAIR_SHARE_DOCS) == 0.25
    assert backlog_weight(10_000) == MIN_FAIRNESS_WEIGHT


async def test_fairness_deep_backlog_gets_lower_weight(
    temporal_client: Client, tmp_path: Path
) -> None:
    """A tenant with many documents running is counted from visibility and weighs less
    than its share; a tenant with none keeps the full weight."""
    io = f"fair-io-{uuid4().hex[:10]}"  # nobody polls it: the workflows stay running
    settings = Settings(home=tmp_path, io_task_queue=io)
    client = CustodyClient(
        temporal=temporal_client, store=LocalStore(settings.objects_dir), settings=settings
    )
    deep = 3 * FAIR_SHARE_DOCS
    tenant_key = SearchAttributeKey.for_keyword(SA_TENANT)
    heavy = TypedSearchAttributes([SearchAttributePair(tenant_key, "tenant-heavy")])
    handles = [
        await temporal_client.start_workflow(
            WORKFLOW_NAME, id=f"fair-{uuid4().hex}", task_queue=io, search_attributes=heavy
        )
        for _ in range(deep)
    ]
    try:
        for _ in range(100):  # visibility lags its writes a little
            if await backlog.in_flight(client, "tenant-heavy") == deep:
                break
            await asyncio.sleep(0.1)
        weight = await backlog.fairness_weight(client, "tenant-heavy")
        assert weight == backlog_weight(deep) < 1.0
        assert await backlog.fairness_weight(client, "tenant-light") == 1.0
        # Runs of the type under ids not Custody's are left out of every listing.
        listed = await list_documents(client, all_tenants=True, limit=10_000)
        assert not {row.workflow_id for row in listed} & {h.id for h in handles}
    finally:
        for handle in handles:
            await handle.terminate()


async def test_fairness_light_tenant_starts_before_heavy_backlog_drains(
    temporal_client: Client,
) -> None:
    """Tenant B's four documents, queued behind tenant A's deep backlog (A's earlier
    documents already running, so these weigh backlog_weight(40+)), all start OCR
    before A's second; with equal weights B's fourth would start eighth."""
    async with desk(temporal_client) as d:
        for i in range(8):
            await d.start("tenant-a", weight=backlog_weight(40 + i))
        light = [await d.start("tenant-b", weight=backlog_weight(i)) for i in range(4)]
        await d.drain()
    assert len(d.order) == 12
    # Five places: the server may already hold A's oldest task for the next poll.
    assert max(d.order.index(b) for b in light) <= 4, d.order
