"""Every branch of the release workflow, in seconds: stand-in activities
(tests/workflows/release_stand_ins.py) inject each outcome into the real workflow,
step table and dev server. One real release per channel keeps the whole path
honest (test_release.py); the activities' own refusals are tested on their own
(tests/activities/test_release.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import uuid4

import pytest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from custody import egress as eg
from custody import release_steps as steps
from custody.errors import EGRESS_REFUSE_CODES, Code
from custody.settings import Settings
from custody.state.egress import add_policy, add_recipient
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.client.release import release
from tests.helpers import recipient
from tests.workflows.release_stand_ins import (
    Desk,
    Script,
    desk_on,
    markers,
    release_input,
)
from tests.workflows.stand_ins import Quick
from tests.workflows.test_replay import replay_and_keep
from workflows.release import FAIRNESS_PATCH, STEP_MODELS_PATCH

STORE_DOWN = Quick(Code.STORE_UNAVAILABLE)


@pytest.fixture(scope="module")
async def desk(temporal_client: Client) -> AsyncIterator[Desk]:
    """One worker for the module: the real workflow, stand-ins on a fresh queue."""
    async with desk_on(temporal_client) as desk:
        yield desk


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
    assert await markers(desk.client, result.workflow_id) == [STEP_MODELS_PATCH, FAIRNESS_PATCH]
    assert await desk.search_attributes(result.workflow_id) == ("delivered", "")


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
