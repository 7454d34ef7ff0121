"""Every branch of the document workflow, in seconds: stand-in activities
(tests/workflows/stand_ins.py) inject each outcome into the real workflow,
retry policies and dev server. The real-OCR tests keep the whole path honest.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from uuid import uuid4

import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    RetryState,
    TimeoutError,
    TimeoutType,
)
from temporalio.worker import Worker

from custody.errors import REJECT_CODES, Code
from custody.models import DocState, DocumentResult, DocumentStatus
from custody.queues import REASON_KEY, STATE_KEY
from tests.workflows.stand_ins import Quick, Script, StandIns, scheduled, start_document
from workers.versioning import WORKFLOWS
from workflows import retries as r
from workflows.document import DocumentWorkflow

ALL_STEPS = ["accepted", "staged", "validated", "recognised", "published"]

#: What each step is scheduled with, as the workflow scheduled it before the step table
#: (workflows/retries.py): start-to-close, heartbeat and schedule-to-start in seconds
#: (0: none), then the retry's first interval, longest interval and attempts. The
#: workflow is pinned: a change here is a new command for documents in flight.
PINNED_OPTIONS = {
    "custody.stage": (120, 20, 1800, (1, 30, 5)),
    "custody.validate": (120, 20, 1800, (1, 30, 5)),
    "custody.ocr": (1800, 45, 7200, (2, 60, 3)),
    "custody.check": (60, 20, 0, (1, 30, 5)),
    "custody.publish": (120, 30, 0, (2, 120, 12)),
    "custody.conclude": (60, 0, 0, (2, 120, 12)),
}


@dataclass
class Desk:
    """The module's worker queue, and how a test runs one scripted document on it."""

    client: Client
    stand_ins: StandIns
    queue: str

    async def run(self, script: Script) -> DocumentResult:
        handle = await start_document(self.client, self.stand_ins, self.queue, script)
        return await handle.result()

    async def search_attributes(self, workflow_id: str) -> tuple[str | None, str | None]:
        desc = await self.client.get_workflow_handle(workflow_id).describe()
        attrs = desc.typed_search_attributes
        return attrs.get(STATE_KEY), attrs.get(REASON_KEY)


@pytest.fixture(scope="module")
async def desk(temporal_client: Client) -> AsyncIterator[Desk]:
    """One worker for the module: the real workflow, stand-ins on a fresh queue."""
    stand_ins = StandIns()
    queue = f"branches-{uuid4().hex[:10]}"
    activities = stand_ins.activities()
    async with Worker(
        temporal_client, task_queue=queue, workflows=WORKFLOWS, activities=activities
    ):
        yield Desk(temporal_client, stand_ins, queue)


def _states(result: DocumentResult) -> list[str]:
    return [t.state.value for t in result.transitions]


async def test_workflow_schedules_each_step_as_it_always_did(desk: Desk) -> None:
    """Every step, conclude included, runs with the options it had before the step table."""
    published = await desk.run(Script())
    quarantined = await desk.run(Script(faults={"check": [Code.LOW_CONFIDENCE]}))
    options = await scheduled(desk.client, published.workflow_id)
    options |= await scheduled(desk.client, quarantined.workflow_id, quarantined.run_id)
    assert {name: o[:4] for name, o in options.items()} == PINNED_OPTIONS
    assert {o[4:] == (2.0, r.NEVER_RETRY) for o in options.values()} == {True}


@pytest.mark.parametrize("band", ["high", "review"])
async def test_workflow_publishes_and_hands_each_result_on(desk: Desk, band: str) -> None:
    """A clean run publishes in either band, passing each step's references to the next."""
    script = Script(band=band)
    result = await desk.run(script)
    assert result.state is DocState.PUBLISHED and result.code is None
    assert _states(result) == ALL_STEPS
    assert result.attempts == dict.fromkeys(["stage", "validate", "ocr", "check", "publish"], 1)
    assert (result.pages, result.record_key) == (2, f"records/{result.sha256}")
    stage, ocr, check, publish = (script.inputs[s] for s in ("stage", "ocr", "check", "publish"))
    assert stage.intake_sig == "sig-intake" and ocr.source_sig == "sig-src"
    assert check.page_keys == publish.ocr.page_keys and check.page_sigs == ["sig-p0", "sig-p1"]
    assert publish.check.band == band and publish.check.text_sha256 == "c" * 64
    assert [t.state.value for t in publish.transitions] == ALL_STEPS
    assert "conclude" not in script.inputs
    assert await desk.search_attributes(result.workflow_id) == ("published", "")


@pytest.mark.parametrize("code", sorted(REJECT_CODES))
async def test_workflow_rejects_each_reject_code_before_ocr(desk: Desk, code: Code) -> None:
    """A rule broken at validation rejects at once: no retry, no OCR, the source kept."""
    script = Script(faults={"validate": [code]})
    result = await desk.run(script)
    assert (result.state, result.code) == (DocState.REJECTED, code.value)
    assert result.attempts == {"stage": 1, "validate": 1} and script.attempts("validate") == 1
    assert "ocr" not in script.inputs and _states(result) == ["accepted", "staged", "rejected"]
    concluded = script.inputs["conclude"]
    assert (concluded.state, concluded.code) == (DocState.REJECTED, code.value)
    assert concluded.source_key == f"sources/{result.sha256}"
    assert await desk.search_attributes(result.workflow_id) == ("rejected", code.value)


async def test_workflow_concluded_run_answers_status_from_its_result(desk: Desk) -> None:
    """The run a rejected document continues as answers ``status`` with its result's state,
    code, attempts, pages and transitions."""
    result = await desk.run(Script(faults={"validate": [Code.PAGE_LIMIT]}))
    handle = desk.client.get_workflow_handle(result.workflow_id)
    status = await handle.query("status", result_type=DocumentStatus)
    assert (status.sha256, status.tenant) == (result.sha256, result.tenant)
    assert (status.state, status.code) == (DocState.REJECTED, Code.PAGE_LIMIT.value)
    assert (status.attempts, status.pages) == ({"stage": 1, "validate": 1}, result.pages)
    assert status.transitions == result.transitions and len(status.transitions) == 3


@pytest.mark.parametrize(
    ("step", "code"),
    [
        ("stage", Code.HASH_MISMATCH),
        ("validate", Code.SEAL_INVALID),
        ("ocr", Code.PAGE_COUNT_MISMATCH),
        ("check", Code.LOW_CONFIDENCE),
        ("check", Code.NO_TEXT),
        ("check", Code.PAGE_COUNT_MISMATCH),
        ("publish", Code.HASH_MISMATCH),
    ],
)
async def test_workflow_quarantines_each_code_where_it_arises(
    desk: Desk, step: str, code: Code
) -> None:
    """A quarantine code fails its step once and concludes quarantined, the source kept."""
    script = Script(faults={step: [code]})
    result = await desk.run(script)
    assert (result.state, result.code) == (DocState.QUARANTINED, code.value)
    assert result.attempts[step] == 1 and script.attempts(step) == 1
    assert _states(result)[-1] == "quarantined"
    concluded = script.inputs["conclude"]
    assert (concluded.state, concluded.code) == (DocState.QUARANTINED, code.value)
    # Before staging finishes, the intake object is what is kept.
    kept = f"intake/{result.sha256}" if step == "stage" else f"sources/{result.sha256}"
    assert concluded.source_key == kept
    assert await desk.search_attributes(result.workflow_id) == ("quarantined", code.value)


@pytest.mark.parametrize("step", ["stage", "ocr"])
async def test_workflow_refused_reference_keeps_no_source(desk: Desk, step: str) -> None:
    """REF_INVALID quarantines without naming the refused reference as the kept source."""
    script = Script(faults={step: [Code.REF_INVALID]})
    result = await desk.run(script)
    assert (result.state, result.code) == (DocState.QUARANTINED, Code.REF_INVALID.value)
    assert script.inputs["conclude"].source_key is None


async def test_workflow_quarantines_an_unknown_failure_type_as_internal(desk: Desk) -> None:
    """A failure whose type is no Custody code is kept as INTERNAL, never published."""
    odd = ApplicationError("stand-in: unmapped", type="NotACode", non_retryable=True)
    script = Script(faults={"validate": [odd]})
    result = await desk.run(script)
    assert (result.state, result.code) == (DocState.QUARANTINED, Code.INTERNAL.value)
    assert result.attempts["validate"] == 1


async def test_workflow_quarantines_ocr_error_after_three_attempts(desk: Desk) -> None:
    """An OCR crash on every attempt is retried as OCR_RETRY allows, then kept as attempt 3."""
    script = Script(faults={"ocr": [Quick(Code.OCR_ERROR)]})
    result = await desk.run(script)
    assert (result.state, result.code) == (DocState.QUARANTINED, Code.OCR_ERROR.value)
    assert result.attempts["ocr"] == 3 == script.attempts("ocr")
    assert script.inputs["conclude"].attempts["ocr"] == 3


async def test_workflow_quarantines_publish_when_its_attempts_run_out(desk: Desk) -> None:
    """A store that stays down through every publish attempt quarantines after the twelfth."""
    script = Script(faults={"publish": [Quick(Code.STORE_UNAVAILABLE)]})
    result = await desk.run(script)
    assert (result.state, result.code) == (DocState.QUARANTINED, Code.STORE_UNAVAILABLE.value)
    assert result.attempts["publish"] == 12 == script.attempts("publish")
    assert script.inputs["conclude"].source_key == f"sources/{result.sha256}"


async def test_workflow_counts_attempts_of_a_step_that_recovers(desk: Desk) -> None:
    """A step that succeeds on its third attempt publishes with attempt 3 recorded."""
    blip = Quick(Code.STORE_UNAVAILABLE)
    script = Script(faults={"stage": [blip, blip, None]})
    result = await desk.run(script)
    assert result.state is DocState.PUBLISHED
    assert result.attempts["stage"] == 3 and script.inputs["publish"].attempts["stage"] == 3


async def test_workflow_status_query_answers_while_ocr_runs(desk: Desk) -> None:
    """While OCR runs, the status query and search attributes show the validated state."""
    script = Script(hold=asyncio.Event(), pages=3)
    handle: WorkflowHandle[DocumentWorkflow, DocumentResult] = await start_document(
        desk.client, desk.stand_ins, desk.queue, script
    )
    await asyncio.wait_for(script.ocr_started.wait(), timeout=10)
    status = await handle.query(DocumentWorkflow.status)
    assert (status.state, status.pages, status.code) == (DocState.VALIDATED, 3, None)
    assert status.attempts == {"stage": 1, "validate": 1}
    assert [t.state.value for t in status.transitions] == ALL_STEPS[:3]
    assert await desk.search_attributes(handle.id) == ("validated", "")
    assert script.hold is not None
    script.hold.set()
    assert (await handle.result()).state is DocState.PUBLISHED


def _activity_error(cause: BaseException, retry_state: RetryState) -> ActivityError:
    """The error the SDK hands the workflow when an activity fails for good."""
    err = ActivityError(
        "activity failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="worker",
        activity_type="custody.x",
        activity_id="1",
        retry_state=retry_state,
    )
    err.__cause__ = cause
    return err


@pytest.mark.parametrize(
    ("step", "retry", "code"),
    [("ocr", r.OCR_RETRY, Code.OCR_TIMEOUT), ("check", r.IO_RETRY, Code.IO_TIMEOUT)],
)
def test_classify_lost_attempts_quarantine_as_the_steps_timeout(
    step: str, retry: RetryPolicy, code: Code
) -> None:
    """Attempts the server timed out (no code from the activity) keep the step's timeout
    code and the policy's attempt count; the dev server only times out after the real
    heartbeat timeout, so this branch is tested on the error the SDK hands over."""
    lost = TimeoutError("heartbeat", type=TimeoutType.HEARTBEAT, last_heartbeat_details=[])
    failed = r.classify(step, _activity_error(lost, RetryState.MAXIMUM_ATTEMPTS_REACHED), retry)
    assert (failed.state, failed.code) == (DocState.QUARANTINED, code.value)
    assert failed.attempts == retry.maximum_attempts
