"""Stand-in activities for the release workflow, the Temporal samples' pattern.

Each is registered under its real name (``custody.release.prepare`` ...) and
answers from its release's ``Script`` (found by workflow id): a result of the
real model, or the fault the script names for that attempt, raised as
production raises it (``tests.workflows.stand_ins.raise_fault``). They take
both input shapes, as the real activities do, so the real workflow, its step
table and the dev server decide every outcome. Only the work is stood in for:
the real activities are tested in tests/activities/test_release.py, and one
real release per channel in test_release.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from custody import egress as eg
from custody import release_steps as steps
from custody import release_steps_v1 as v1
from tests.workflows.stand_ins import Scripted
from workflows.release import REASON_KEY, STATE_KEY, ReleaseWorkflow

#: Fast enough for a test, the shape of the real one: attempts, then RECIPIENT_UNREACHABLE.
FAST_DELIVERY = eg.DeliveryTuning(max_attempts=3, initial_interval_s=0.05, maximum_interval_s=0.1)


@dataclass
class Script(Scripted):
    """One release's stand-ins."""

    policy: eg.Policy = eg.DEFAULT_POLICY
    #: When set, delivery waits for it, so a test can act while a release is out.
    hold: asyncio.Event | None = None
    delivering: asyncio.Event = field(default_factory=asyncio.Event)
    #: What prepare says of the two-person rule: held for a second person's approval.
    needs_approval: bool = False


class ReleaseStandIns:
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}

    def activities(self) -> list[Callable[..., Any]]:
        return [self.prepare, self.render, self.record, self.deliver, self.receipt, self.close]

    def _enter(self, step: str, inp: Any) -> int:
        return self._script().enter(step, inp)

    def _script(self) -> Script:
        return self.scripts[activity.info().workflow_id]

    @activity.defn(name="custody.release.prepare")
    async def prepare(self, inp: steps.PrepareInput | eg.ReleaseInput) -> steps.Prepared:
        attempt = self._enter("prepare", inp)
        p = steps.Inputs(inp).prepare() if isinstance(inp, eg.ReleaseInput) else inp
        policy = self._script().policy
        to = eg.Recipient(
            name=p.recipient,
            tenant=p.tenant,
            kind=eg.ChannelKind.OUTBOX,
            target="/srv/outbox",
            created_at=datetime.now(UTC),
            created_by="test",
        )
        sources = [_source(sha) for sha in sorted(set(p.documents))]
        return steps.Prepared(
            policy=policy,
            recipient=to,
            sources=sources,
            needs_approval=self._script().needs_approval,
            attempt=attempt,
        )

    @activity.defn(name="custody.release.render")
    async def render(self, inp: steps.RenderInput | v1.Prepared) -> steps.Rendered:
        attempt = self._enter("render", inp)
        job = inp.upgraded() if isinstance(inp, v1.Prepared) else inp
        files = [_file(f"document-{s.sha256[:16]}.pdf") for s in job.sources]
        manifests = {f.name: "m" * 64 for f in files}
        packet = eg.packet_sha256(files)
        return steps.Rendered(
            files=files, packet_sha256=packet, manifest_sha256s=manifests, attempt=attempt
        )

    @activity.defn(name="custody.release.record")
    async def record(self, inp: steps.RecordInput | v1.Rendered) -> steps.Recorded:
        attempt = self._enter("record", inp)
        return steps.Recorded(event_seq=7, event_hash="e" * 64, attempt=attempt)

    @activity.defn(name="custody.release.deliver")
    async def deliver(self, inp: steps.DeliverInput | v1.Recorded) -> eg.Delivered:
        script = self._script()
        script.delivering.set()
        if script.hold is not None:
            await script.hold.wait()
        attempt = self._enter("deliver", inp)
        d = inp.upgraded() if isinstance(inp, v1.Recorded) else inp
        return eg.Delivered(
            channel=d.channel,
            location=d.target,
            answer_sha256="a" * 64,
            attempts=attempt,
            at=datetime.now(UTC),
        )

    @activity.defn(name="custody.release.receipt")
    async def receipt(self, inp: steps.ReceiptInput | v1.ReceiptInput) -> steps.ReceiptRef:
        attempt = self._enter("receipt", inp)
        r = inp.upgraded() if isinstance(inp, v1.ReceiptInput) else inp
        key = eg.receipt_key(r.tenant, r.release_id)
        return steps.ReceiptRef(key=key, sha256="r" * 64, event_seq=8, attempt=attempt)

    @activity.defn(name="custody.release.close")
    async def close(self, inp: steps.CloseInput | v1.CloseInput) -> steps.Closed:
        attempt = self._enter("close", inp)
        return steps.Closed(failed_seq=9, attempt=attempt)


def _source(sha256: str) -> eg.SourceDoc:
    return eg.SourceDoc(
        sha256=sha256,
        source_key=f"sources/{sha256}",
        media_type="image/tiff",
        pages=1,
        pages_key=f"pages/{sha256}",
        text_key=f"text/{sha256}",
    )


def _file(name: str) -> eg.FileRef:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return eg.FileRef(name=name, sha256=digest, bytes=100, media_type="application/pdf")


def release_input(
    documents: int = 1, delivery: eg.DeliveryTuning = FAST_DELIVERY
) -> eg.ReleaseInput:
    """A fresh release of ``documents`` made-up documents to ``clinic-b``."""
    return eg.ReleaseInput(
        release_id=uuid4().hex,
        tenant="trelease",
        recipient="clinic-b",
        policy_sha256=eg.DEFAULT_POLICY.sha256(),
        documents=[uuid4().hex * 2 for _ in range(documents)],
        actor="op:test",
        requested_at=datetime.now(UTC),
        delivery=delivery,
    )


async def start_release(
    client: Client,
    stand_ins: ReleaseStandIns,
    queue: str,
    script: Script,
    inp: eg.ReleaseInput | None = None,
) -> WorkflowHandle[ReleaseWorkflow, eg.ReleaseResult]:
    """Start the real workflow for a release whose activities follow ``script``."""
    inp = inp or release_input()
    workflow_id = eg.release_workflow_id(inp.release_id)
    stand_ins.scripts[workflow_id] = script
    return await client.start_workflow(ReleaseWorkflow.run, inp, id=workflow_id, task_queue=queue)


@dataclass
class Desk:
    """The module's worker queue, and how a test runs one scripted release on it."""

    client: Client
    stand_ins: ReleaseStandIns
    queue: str

    async def run(self, script: Script, inp: eg.ReleaseInput | None = None) -> eg.ReleaseResult:
        handle = await start_release(self.client, self.stand_ins, self.queue, script, inp)
        return await handle.result()

    async def search_attributes(self, workflow_id: str) -> tuple[str | None, str | None]:
        attrs = (
            await self.client.get_workflow_handle(workflow_id).describe()
        ).typed_search_attributes
        return attrs.get(STATE_KEY), attrs.get(REASON_KEY)


@asynccontextmanager
async def desk_on(client: Client) -> AsyncIterator[Desk]:
    """A worker for a module's tests: the real workflow, stand-ins on a fresh queue."""
    stand_ins, queue = ReleaseStandIns(), f"releases-{uuid4().hex[:10]}"
    activities = stand_ins.activities()
    async with Worker(client, task_queue=queue, workflows=[ReleaseWorkflow], activities=activities):
        yield Desk(client, stand_ins, queue)


async def markers(client: Client, workflow_id: str) -> list[str]:
    """The patch markers a run recorded."""
    found = []
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = event.marker_recorded_event_attributes.details
            found.append(json.loads(details["patch-data"].payloads[0].data)["id"])
    return found
