"""The ``release-step-models`` patch: what history holds now, the same commands as before
it, a release in flight across the upgrade, and the patch marker under the production
codec. Stand-in activities (tests/workflows/release_stand_ins.py) on the real workflow and
dev server; the saved v1 histories (tests/workflows/histories/release-*-v1.json) are what
the code before the patch recorded.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import uuid4

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer, Worker

from custody import egress as eg
from custody import release_steps_v1 as v1
from custody.converter import data_converter
from custody.errors import Code
from custody.keys import keyring as keys
from custody.queues import fairness_key
from tests.workflows.release_before_patch import ReleaseBeforeStepModels
from tests.workflows.release_stand_ins import (
    Desk,
    ReleaseStandIns,
    Script,
    desk_on,
    markers,
    start_release,
)
from tests.workflows.stand_ins import scheduled, scheduled_options
from tests.workflows.test_replay import HISTORIES
from workflows import retries as r
from workflows.release import FAIRNESS_PATCH, STEP_MODELS_PATCH, ReleaseWorkflow


@pytest.fixture(scope="module")
async def desk(temporal_client: Client) -> AsyncIterator[Desk]:
    async with desk_on(temporal_client) as desk:
        yield desk


async def test_release_history_holds_policy_and_files_where_steps_need_them(
    desk: Desk,
) -> None:
    """The policy is in history where render and record need it, each file reference where
    deliver and receipt do, the recipient's registration once: not nested into every later
    message, as v1 histories show."""
    script = Script()
    result = await desk.run(script)
    handle = desk.client.get_workflow_handle(result.workflow_id)
    now = (await handle.fetch_history()).to_json()
    v1_history = (HISTORIES / "release-delivered-v1.json").read_text()
    then = json.loads(v1_history)["events"][-1]["workflowExecutionCompletedEventAttributes"]
    v1_file = json.loads(_payload(then["result"]))["files"][0]["sha256"]
    assert _count(now, result.files[0].sha256) == 4  # rendered, deliver, receipt, the result
    assert _count(v1_history, v1_file) == 6
    watermark = eg.DEFAULT_POLICY.watermark
    assert _count(now, watermark) == 3  # prepared, render, record
    assert _count(v1_history, watermark) == 7
    registration = '"created_by"'  # a field of the recipient's registration only
    assert (_count(now, registration), _count(v1_history, registration)) == (1, 7)


def _payload(payloads: dict[str, list[dict[str, str]]]) -> str:
    return base64.b64decode(payloads["payloads"][0]["data"]).decode()


def _count(history_json: str, needle: str) -> int:
    """How many payloads of a history (as JSON, payloads base64) hold ``needle``."""
    found = 0
    for event in json.loads(history_json)["events"]:
        for payload in _payloads(event):
            found += needle in base64.b64decode(payload["data"]).decode()
    return found


def _payloads(node: object) -> list[dict[str, str]]:
    if isinstance(node, dict):
        if "payloads" in node and isinstance(node["payloads"], list):
            return list(node["payloads"])
        return [p for value in node.values() for p in _payloads(value)]
    return []


async def test_release_patch_marker_needs_no_codec_in_production(
    temporal_client: Client, tmp_path: Path
) -> None:
    """The patch marker is the SDK core's, never the codec's: a release runs and replays
    with the production codec, which refuses every payload it did not seal."""
    sealed = data_converter(
        keys.init_keyring(tmp_path / "keys", development=False), require_sealed=True
    )
    client = Client(**{**temporal_client.config(), "data_converter": sealed})
    stand_ins, queue = ReleaseStandIns(), f"sealed-{uuid4().hex[:10]}"
    workflows, acts = [ReleaseWorkflow], stand_ins.activities()
    async with Worker(client, task_queue=queue, workflows=workflows, activities=acts):
        handle = await start_release(client, stand_ins, queue, Script())
        result = await handle.result()
    assert result.state is eg.ReleaseState.DELIVERED
    assert await markers(client, handle.id) == [STEP_MODELS_PATCH, FAIRNESS_PATCH]
    history = await handle.fetch_history()
    replayed = await Replayer(workflows=workflows, data_converter=sealed).replay_workflow(history)
    assert replayed.replay_failure is None


async def test_release_schedules_each_step_as_the_v1_histories_did(desk: Desk) -> None:
    """Same activity types, timeouts, heartbeats and retries as the code before the step
    models (its saved histories); delivery's retry comes from the release's tuning."""
    delivered = await desk.run(Script())
    failed = await desk.run(Script(faults={"deliver": [Code.RECIPIENT_REFUSED]}))
    now = await scheduled(desk.client, delivered.workflow_id)
    now |= await scheduled(desk.client, failed.workflow_id)
    then = {}
    for name in ("release-delivered-v1", "release-failed-v1"):
        history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
        then |= scheduled_options(history.events)
    deliver = now.pop("custody.release.deliver")
    then.pop("custody.release.deliver")
    assert {k: o[:5] for k, o in now.items()} == {k: o[:5] for k, o in then.items()}
    assert deliver[:4] == (300, 15, 0, (0, 0, 3))  # FAST_DELIVERY: 0.05 s to 0.1 s, 3 tries
    assert {o[5] == r.NEVER_RETRY for o in [*now.values(), deliver]} == {True}


async def test_release_started_before_the_step_models_finishes_on_them(
    temporal_client: Client,
) -> None:
    """A release in flight across the upgrade: started by the old build, it is delivered and
    receipted by the new one, which replays its history and keeps sending the v1 shapes."""
    stand_ins, queue = ReleaseStandIns(), f"upgrade-{uuid4().hex[:10]}"
    script = Script(hold=asyncio.Event())
    async with Worker(temporal_client, task_queue=queue, activities=stand_ins.activities()):
        old = Worker(
            temporal_client,
            task_queue=queue,
            workflows=[ReleaseBeforeStepModels],
            max_cached_workflows=0,  # no sticky queue: the next task goes to whoever polls
        )
        async with old:
            handle = await start_release(temporal_client, stand_ins, queue, script)
            await asyncio.wait_for(script.delivering.wait(), 30)
        async with Worker(temporal_client, task_queue=queue, workflows=[ReleaseWorkflow]):
            assert script.hold is not None
            script.hold.set()
            result = await asyncio.wait_for(handle.result(), 60)
    assert (result.state, result.code) == (eg.ReleaseState.DELIVERED, None)
    assert isinstance(script.inputs["prepare"], eg.ReleaseInput)
    assert isinstance(script.inputs["deliver"], v1.Recorded)  # sent by the old build
    assert isinstance(script.inputs["receipt"], v1.ReceiptInput)  # by the new, still v1
    assert await markers(temporal_client, handle.id) == []


async def test_release_steps_carry_the_tenants_fairness_key(desk: Desk) -> None:
    """Every step is scheduled under the release's tenant as its fairness key (and the
    release's priority), as a document's steps are: one tenant's renders queue behind its own."""
    result = await desk.run(Script())
    handle = desk.client.get_workflow_handle(result.workflow_id)
    keys = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            keys.append(event.activity_task_scheduled_event_attributes.priority.fairness_key)
    assert len(keys) >= 5 and set(keys) == {fairness_key(result.tenant)}
