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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from temporalio import activity
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
class Script:
    """One document's stand-ins: per step, each attempt's fault (the last repeats)."""

    faults: dict[str, list[Fault]] = field(default_factory=dict)
    pages: int = 2
    band: str = "high"
    #: When set, OCR waits for it, so a test can look at the running workflow.
    hold: asyncio.Event | None = None
    ocr_started: asyncio.Event = field(default_factory=asyncio.Event)
    calls: list[tuple[str, int]] = field(default_factory=list)
    inputs: dict[str, Any] = field(default_factory=dict)

    def attempts(self, step: str) -> int:
        return sum(1 for name, _ in self.calls if name == step)


class StandIns:
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}

    def activities(self) -> list[Callable[..., Any]]:
        return [self.stage, self.validate, self.ocr, self.check, self.publish, self.conclude]

    def _enter(self, step: str, inp: Any) -> tuple[Script, int]:
        script = self.scripts[inp.sha256]
        attempt = activity.info().attempt
        script.calls.append((step, attempt))
        script.inputs[step] = inp
        faults = script.faults.get(step)
        if faults:
            _raise(faults[min(attempt, len(faults)) - 1])
        return script, attempt

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


def _raise(fault: Fault) -> None:
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
