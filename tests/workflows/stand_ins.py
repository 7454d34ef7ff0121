"""Stand-in activities for the document workflow, the Temporal samples' pattern.

Each is registered under its real name (``custody.stage`` ...) and answers
from a per-document ``Script``: a canned result of the real model, or the
fault the script names for that attempt. Faults are raised as production
raises them (``activities.faults.failure``: the code as the type, the attempt
in the details, non-retryable for reject and quarantine codes), so the real
workflow, retry policies and server decide the outcome. Only the work is
stood in for; tests that need the work use the real pipeline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from temporalio import activity
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle
from temporalio.exceptions import ApplicationError

from activities.faults import failure
from custody import ids
from custody.errors import Code
from custody.models import (
    CheckInput,
    CheckResult,
    ConcludeInput,
    ConcludeResult,
    DocumentInput,
    DocumentResult,
    EventRef,
    OcrInput,
    OcrResult,
    PublishInput,
    PublishResult,
    StageInput,
    StageResult,
    ValidateInput,
    ValidationResult,
)
from workflows.document import DocumentWorkflow


@dataclass(frozen=True)
class Quick:
    """A retryable failure retried at once instead of after the policy's backoff
    (``next_retry_delay``): the attempt count is the policy's, the wait is not."""

    code: Code


#: What one attempt does: succeed (None), fail with a code as production does,
#: fail quickly, or raise exactly the given error. Lost attempts (timeouts) are
#: not stood in for: the server times them out only after the real heartbeat
#: timeout (20-45 s), so ``classify`` is tested on them directly.
Fault = Code | Quick | ApplicationError | None


@dataclass
class Scripted:
    """A run's stand-ins: per step, each attempt's fault (the last repeats); every call seen."""

    faults: dict[str, list[Fault]] = field(default_factory=dict)
    calls: list[tuple[str, int]] = field(default_factory=list)
    inputs: dict[str, Any] = field(default_factory=dict)

    def attempts(self, step: str) -> int:
        return sum(1 for name, _ in self.calls if name == step)

    def enter(self, step: str, inp: Any) -> int:
        """Note this attempt of ``step`` and its input, and fail it as scripted; its number."""
        attempt = activity.info().attempt
        self.calls.append((step, attempt))
        self.inputs[step] = inp
        faults = self.faults.get(step)
        if faults:
            raise_fault(faults[min(attempt, len(faults)) - 1])
        return attempt


@dataclass
class Script(Scripted):
    """One document's stand-ins."""

    pages: int = 2
    band: str = "high"
    #: When set, OCR waits for it, so a test can look at the running workflow.
    hold: asyncio.Event | None = None
    ocr_started: asyncio.Event = field(default_factory=asyncio.Event)


class StandIns:
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}

    def activities(self) -> list[Callable[..., Any]]:
        return [self.stage, self.validate, self.ocr, self.check, self.publish, self.conclude]

    def _enter(self, step: str, inp: Any) -> tuple[Script, int]:
        script = self.scripts[inp.sha256]
        return script, script.enter(step, inp)

    @activity.defn(name="custody.stage")
    async def stage(self, inp: StageInput) -> StageResult:
        _, attempt = self._enter("stage", inp)
        key = f"sources/{inp.sha256}"
        return StageResult(source_key=key, size_bytes=1234, attempt=attempt, source_sig="sig-src")

    @activity.defn(name="custody.validate")
    async def validate(self, inp: ValidateInput) -> ValidationResult:
        script, attempt = self._enter("validate", inp)
        return ValidationResult(
            media_type="image/tiff",
            pages=script.pages,
            policy_version="limits-test",
            packet_event=EventRef(seq=1, hash="e" * 64),
            attempt=attempt,
        )

    @activity.defn(name="custody.ocr")
    async def ocr(self, inp: OcrInput) -> OcrResult:
        script, attempt = self._enter("ocr", inp)
        script.ocr_started.set()
        if script.hold is not None:
            await script.hold.wait()
        n = inp.pages
        return OcrResult(
            pages=n,
            page_keys=[f"work/{inp.sha256}/p{i}" for i in range(n)],
            page_confidences=[0.9] * n,
            mean_confidence=0.9,
            chars=100,
            engine="stand-in",
            engine_version="0",
            params={},
            seconds=0.1,
            attempt=attempt,
            page_sigs=[f"sig-p{i}" for i in range(n)],
        )

    @activity.defn(name="custody.check")
    async def check(self, inp: CheckInput) -> CheckResult:
        script, attempt = self._enter("check", inp)
        n = inp.expected_pages
        return CheckResult(
            text_sha256="c" * 64,
            chars=100,
            mean_confidence=0.9 if script.band == "high" else 0.6,
            page_confidences=[0.9] * n,
            band=script.band,
            attempt=attempt,
        )

    @activity.defn(name="custody.publish")
    async def publish(self, inp: PublishInput) -> PublishResult:
        _, attempt = self._enter("publish", inp)
        key = f"records/{inp.sha256}"
        return PublishResult(record_key=key, text_key="text/x", created=True, attempt=attempt)

    @activity.defn(name="custody.conclude")
    async def conclude(self, inp: ConcludeInput) -> ConcludeResult:
        self._enter("conclude", inp)
        return ConcludeResult(outcome_key=f"outcomes/{inp.sha256}", created=True)


def raise_fault(fault: Fault) -> None:
    """Fail this attempt as ``fault`` says, as production fails it (nothing for None)."""
    if fault is None:
        return
    if isinstance(fault, ApplicationError):
        raise fault
    if isinstance(fault, Quick):
        err = failure(fault.code)
        raise ApplicationError(
            err.message,
            *err.details,
            type=err.type,
            non_retryable=err.non_retryable,
            next_retry_delay=timedelta(milliseconds=20),
        )
    raise failure(fault)


async def start_document(
    client: Client,
    stand_ins: StandIns,
    queue: str,
    script: Script,
    *,
    tenant: str = "tbranches",
    ocr_queue: str | None = None,
    priority: int | None = None,
    fairness_weight: float | None = None,
) -> WorkflowHandle[DocumentWorkflow, DocumentResult]:
    """Start the real workflow for a fresh document whose activities follow ``script``."""
    sha = uuid4().hex * 2
    stand_ins.scripts[sha] = script
    inp = DocumentInput(
        sha256=sha,
        tenant=tenant,
        intake_key=f"intake/{sha}",
        size_bytes=1234,
        submitted_at=datetime.now(UTC),
        io_task_queue=queue,
        ocr_task_queue=ocr_queue or queue,
        intake_sig="sig-intake",
        priority=priority,
        fairness_weight=fairness_weight,
    )
    return await client.start_workflow(
        DocumentWorkflow.run, inp, id=ids.workflow_id(sha, inp.tenant), task_queue=queue
    )


#: One scheduled activity's options: start-to-close, heartbeat and schedule-to-start
#: in seconds (0: none), the retry's (first interval, longest interval, attempts),
#: its backoff coefficient and its non-retryable types.
Options = tuple[int, int, int, tuple[int, int, int], float, list[str]]


def scheduled_options(events: Iterable[HistoryEvent]) -> dict[str, Options]:
    """Each activity type a history scheduled, with the options the server recorded."""
    found: dict[str, Options] = {}
    for event in events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            a = event.activity_task_scheduled_event_attributes
            rp = a.retry_policy
            retry = (rp.initial_interval.seconds, rp.maximum_interval.seconds, rp.maximum_attempts)
            timeouts = (a.start_to_close_timeout, a.heartbeat_timeout, a.schedule_to_start_timeout)
            s2c, heartbeat, s2s = (t.seconds for t in timeouts)
            kinds = list(rp.non_retryable_error_types)
            found[a.activity_type.name] = (
                s2c,
                heartbeat,
                s2s,
                retry,
                rp.backoff_coefficient,
                kinds,
            )
    return found


async def scheduled(
    client: Client, workflow_id: str, run_id: str | None = None
) -> dict[str, Options]:
    """``scheduled_options`` of a run on the server (``run_id``: that run, not the newest:
    a concluded document continues as a run of its outcome's type, which schedules nothing)."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    return scheduled_options([e async for e in handle.fetch_history_events()])
