"""Every branch of the release workflow, in seconds: stand-in activities
(tests/workflows/release_stand_ins.py) inject each outcome into the real workflow,
step table and dev server. One real release per channel keeps the whole path
honest (test_release.py); the activities' own refusals are tested on their own
(tests/activities/test_release.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer, Worker

from custody import egress as eg
from custody import release_steps as steps
from custody import release_steps_v1 as v1
from custody.converter import data_converter
from custody.errors import EGRESS_REFUSE_CODES, Code
from custody.keys import keyring as keys
from custody.settings import Settings
from custody.state.egress import add_policy, add_recipient
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.client.release import release
from tests.helpers import recipient
from tests.workflows.release_before_patch import ReleaseBeforeStepModels
from tests.workflows.release_stand_ins import (
    ReleaseStandIns,
    Script,
    release_input,
    start_release,
)
from tests.workflows.stand_ins import Quick, scheduled, scheduled_options
from tests.workflows.test_replay import HISTORIES, replay_and_keep
from workflows import retries as r
from workflows.release import REASON_KEY, STATE_KEY, STEP_MODELS_PATCH, ReleaseWorkflow

STORE_DOWN = Quick(Code.STORE_UNAVAILABLE)


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


@pytest.fixture(scope="module")
async def desk(temporal_client: Client) -> AsyncIterator[Desk]:
    """One worker for the module: the real workflow, stand-ins on a fresh queue."""
    stand_ins, queue = ReleaseStandIns(), f"releases-{uuid4().hex[:10]}"
    async with Worker(
        temporal_client,
        task_queue=queue,
        workflows=[ReleaseWorkflow],
        activities=stand_ins.activities(),
    ):
        yield Desk(temporal_client, stand_ins, queue)


async def _markers(client: Client, workflow_id: str) -> list[str]:
    """The patch markers a run recorded."""
    found = []
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = event.marker_recorded_event_attributes.details
            found.append(json.loads(details["patch-data"].payloads[0].data)["id"])
    return found


async def test_release_delivers_and_hands_each_step_only_what_it_needs(desk: Desk) -> None:
    """A clean run: every step once, each input built from the results before it."""
    script = Script()
    inp = release_input(documents=2)
    result = await desk.run(script, inp)
    assert (result.state, result.code) == (eg.ReleaseState.DELIVERED, None)
    assert result.attempts == dict.fromkeys(
        ["prepare", "render", "record", "deliver", "receipt"], 1
    )
    assert result.policy == "default" and len(result.files) == 2
    assert result.receipt_key == eg.receipt_key(inp.tenant, inp.release_id)
    prepare, render, record, deliver, receipt = (
        script.inputs[s] for s in ("prepare", "render", "record", "deliver", "receipt")
    )
    assert isinstance(prepare, steps.PrepareInput) and prepare.documents == inp.documents
    assert (render.recipient, render.policy) == ("clinic-b", eg.DEFAULT_POLICY)
    assert record.documents == sorted(inp.documents) and record.size == 200
    assert record.packet_sha256 == eg.packet_sha256(result.files)
    assert (deliver.channel, deliver.target, deliver.files) == (
        eg.ChannelKind.OUTBOX,
        "/srv/outbox",
        result.files,
    )
    assert (receipt.event_seq, receipt.event_hash) == (7, "e" * 64)
    assert receipt.policy_sha256 == inp.policy_sha256 and receipt.delivered.attempts == 1
    assert "close" not in script.inputs
    assert await _markers(desk.client, result.workflow_id) == [STEP_MODELS_PATCH]
    assert await desk.search_attributes(result.workflow_id) == ("delivered", "")


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
    assert await _markers(client, handle.id) == [STEP_MODELS_PATCH]
    history = await handle.fetch_history()
    replayed = await Replayer(workflows=workflows, data_converter=sealed).replay_workflow(history)
    assert replayed.replay_failure is None


@pytest.mark.parametrize("code", sorted(EGRESS_REFUSE_CODES))
async def test_release_refuses_each_refusal_code_at_prepare(desk: Desk, code: Code) -> None:
    """A refusal ends the release at once: nothing rendered, recorded or closed."""
    script = Script(faults={"prepare": [code]})
    result = await desk.run(script)
    assert (result.state, result.code) == (eg.ReleaseState.REFUSED, code.value)
    assert result.attempts == {"prepare": 1} and [s for s, _ in script.calls] == ["prepare"]
    assert result.policy is None and result.files == []
    assert await desk.search_attributes(result.workflow_id) == ("refused", code.value)
    if code is Code.NOT_PUBLISHED:
        await replay_and_keep(desk.client, result.workflow_id, "release-refused")


async def test_release_failing_at_prepare_for_no_refusal_is_failed(desk: Desk) -> None:
    """A prepare that ends for a reason that is no refusal (here a store blip, then a
    shredded tenant) fails the release, nothing rendered; its attempts are the real ones."""
    script = Script(faults={"prepare": [STORE_DOWN, Code.TENANT_SHREDDED]})
    result = await desk.run(script)
    assert (result.state, result.code) == (eg.ReleaseState.FAILED, Code.TENANT_SHREDDED.value)
    assert result.attempts == {"prepare": 2} and script.attempts("prepare") == 2
    assert await desk.search_attributes(result.workflow_id) == ("failed", "TENANT_SHREDDED")


@pytest.mark.parametrize(
    ("step", "faults", "code", "attempts"),
    [
        ("render", [Code.RENDER_FAILED], Code.RENDER_FAILED, 1),
        ("render", [STORE_DOWN], Code.STORE_UNAVAILABLE, 3),
        ("record", [Code.TENANT_SHREDDED], Code.TENANT_SHREDDED, 1),
    ],
)
async def test_release_fails_before_delivery_without_closing(
    desk: Desk, step: str, faults: list[Code | Quick], code: Code, attempts: int
) -> None:
    """Render or record failing for good: failed, nothing delivered, no event to close."""
    script = Script(faults={step: faults})
    result = await desk.run(script)
    assert (result.state, result.code) == (eg.ReleaseState.FAILED, code.value)
    assert result.attempts[step] == attempts == script.attempts(step)
    assert "deliver" not in script.inputs and "close" not in script.inputs


@pytest.mark.parametrize(
    ("code", "attempts"),
    [(Code.RECIPIENT_UNREACHABLE, 3), (Code.RECIPIENT_REFUSED, 1), (Code.DELIVERY_CONFLICT, 1)],
)
async def test_release_delivery_failing_closes_with_its_code(
    desk: Desk, code: Code, attempts: int
) -> None:
    """Unreachable past the delivery attempts, or refused at once: closed with the code."""
    script = Script(faults={"deliver": [code]})
    result = await desk.run(script)
    assert (result.state, result.code) == (eg.ReleaseState.FAILED, code.value)
    assert result.attempts["deliver"] == attempts == script.attempts("deliver")
    closed = script.inputs["close"]
    assert isinstance(closed, steps.CloseInput)
    assert (closed.code, closed.event_seq, closed.release_id) == (code.value, 7, result.release_id)
    assert "receipt" not in script.inputs and result.receipt_key is None
    assert await desk.search_attributes(result.workflow_id) == ("failed", code.value)
    if code is Code.RECIPIENT_UNREACHABLE:
        await replay_and_keep(desk.client, result.workflow_id, "release-failed")


async def test_release_close_failing_too_still_reports_the_delivery_failure(desk: Desk) -> None:
    """If even ``egress.failed`` cannot be written, the result says failed with delivery's code."""
    script = Script(faults={"deliver": [Code.RECIPIENT_REFUSED], "close": [Code.TENANT_SHREDDED]})
    result = await desk.run(script)
    assert (result.state, result.code) == (eg.ReleaseState.FAILED, "RECIPIENT_REFUSED")
    assert result.attempts["close"] == 1 == script.attempts("close")


async def test_release_counts_the_attempts_of_a_delivery_that_recovers(desk: Desk) -> None:
    """Delivered on its third attempt: the result and the receipt both say 3."""
    script = Script(faults={"deliver": [Code.RECIPIENT_UNREACHABLE] * 2 + [None]})
    result = await desk.run(script)
    assert result.state is eg.ReleaseState.DELIVERED
    assert result.attempts["deliver"] == 3 == script.attempts("deliver")
    assert script.inputs["receipt"].delivered.attempts == 3


async def test_release_receipt_failing_leaves_it_delivered_with_the_code(desk: Desk) -> None:
    """The packet arrived; a receipt that cannot be written is shown, not a failed release."""
    script = Script(faults={"receipt": [Quick(Code.STORE_UNAVAILABLE), Code.SIGNING_KEY_MISSING]})
    result = await desk.run(script)
    assert (result.state, result.code) == (eg.ReleaseState.DELIVERED, "SIGNING_KEY_MISSING")
    assert result.receipt_key is None and result.attempts["receipt"] == 2
    assert "close" not in script.inputs


async def test_release_failure_of_no_known_type_is_internal(desk: Desk) -> None:
    """A failure whose type is no Custody code is kept as INTERNAL."""
    odd = ApplicationError("stand-in: unmapped", type="NotACode", non_retryable=True)
    result = await desk.run(Script(faults={"render": [odd]}))
    assert (result.state, result.code) == (eg.ReleaseState.FAILED, Code.INTERNAL.value)


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


async def test_release_ten_concurrent_requests_start_one_workflow(
    desk: Desk, tmp_path: Path
) -> None:
    """Ten identical requests at once converge on one workflow: prepared and delivered once."""
    settings = Settings(home=tmp_path, temporal_address="unused", io_task_queue=desk.queue)
    custody = CustodyClient(
        temporal=desk.client, store=LocalStore(settings.objects_dir), settings=settings
    )
    add_recipient(custody.store, recipient("trelease", "clinic-ten", tmp_path / "outbox"))
    docs = [uuid4().hex * 2]
    rid = eg.release_id("trelease", "clinic-ten", eg.DEFAULT_POLICY.sha256(), docs)
    script = Script()
    desk.stand_ins.scripts[eg.release_workflow_id(rid)] = script
    starts = await asyncio.gather(
        *(release(custody, docs, to="clinic-ten", tenant="trelease", actor="op") for _ in range(10))
    )
    assert {s.release_id for s in starts} == {rid}
    handle = desk.client.get_workflow_handle(
        eg.release_workflow_id(rid), result_type=eg.ReleaseResult
    )
    assert (await handle.result()).state is eg.ReleaseState.DELIVERED
    assert (script.attempts("prepare"), script.attempts("deliver")) == (1, 1)


async def test_release_pins_the_policy_current_at_start(desk: Desk, tmp_path: Path) -> None:
    """A policy changed after the release started does not change what prepare is asked for."""
    settings = Settings(home=tmp_path, temporal_address="unused", io_task_queue=desk.queue)
    custody = CustodyClient(
        temporal=desk.client, store=LocalStore(settings.objects_dir), settings=settings
    )
    add_recipient(custody.store, recipient("trelease", "clinic-pin", tmp_path / "outbox"))
    first = eg.Policy(name="text-only", include=("text",), c2pa=False)
    add_policy(custody.store, "trelease", first)
    docs = [uuid4().hex * 2]
    rid = eg.release_id("trelease", "clinic-pin", first.sha256(), docs)
    script = Script()
    desk.stand_ins.scripts[eg.release_workflow_id(rid)] = script
    await release(custody, docs, to="clinic-pin", policy="text-only", tenant="trelease", actor="op")
    add_policy(custody.store, "trelease", eg.Policy(name="text-only", include=("searchable_pdf",)))
    await desk.client.get_workflow_handle(eg.release_workflow_id(rid)).result()
    assert script.inputs["prepare"].policy_sha256 == first.sha256()


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
    assert await _markers(temporal_client, handle.id) == []
