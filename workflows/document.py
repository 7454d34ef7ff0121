"""One workflow per document, its ID derived from the SHA-256 of its bytes.

accepted -> staged -> validated -> recognised -> published
                 \\-> rejected (a rule broken; no OCR spent)
                 \\-> quarantined (hash mismatch, low confidence, attempts exhausted)

Deterministic code only: no disk, clock or network. History carries object
keys, hashes, counts and codes, never document bytes or text. Each object key
travels with the signature its creator made (``custody.refs``); the workflow
only passes signatures on, and activities check them before opening anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import workflow
from temporalio.common import Priority, SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.ocr import OcrActivities
    from activities.output import OutputActivities
    from activities.publish import PublishActivities
    from activities.staging import StagingActivities
    from activities.validation import ValidationActivities
    from custody.errors import Code
    from custody.models import (
        CheckInput,
        ConcludeInput,
        DocState,
        DocumentInput,
        DocumentResult,
        DocumentStatus,
        OcrInput,
        OcrResult,
        PublishInput,
        StageInput,
        StageResult,
        Transition,
        ValidateInput,
        ValidationResult,
    )
    from custody.queues import SA_REASON, SA_STATE, WORKFLOW_NAME, scheduling
    from workflows import retries as r
    from workflows.retries import StepFailed

STATE_KEY = SearchAttributeKey.for_keyword(SA_STATE)
REASON_KEY = SearchAttributeKey.for_keyword(SA_REASON)


# The activity class, its input model and its result model: ``_step`` takes its
# types from the method it runs, as ``execute_activity_method`` does.
Activities = TypeVar("Activities")
In = TypeVar("In")
Out = TypeVar("Out", bound=r.Attempted)
R = TypeVar("R")


@workflow.defn(name=WORKFLOW_NAME)
class DocumentWorkflow:
    def __init__(self) -> None:
        self._inp: DocumentInput | None = None
        self._state = DocState.ACCEPTED
        self._code: str | None = None
        self._pages = 0
        self._transitions: list[Transition] = []
        self._attempts: dict[str, int] = {}

    @workflow.run
    async def run(self, inp: DocumentInput) -> DocumentResult:
        self._inp = inp
        self._enter(DocState.ACCEPTED)
        source_key: str | None = None
        try:
            staged = await self._step(r.STAGE, StagingActivities.stage, _stage_input(inp))
            source_key = staged.source_key
            self._enter(DocState.STAGED, staged.worker)
            return await self._after_staging(inp, staged)
        except StepFailed as failed:
            kept: str | None = source_key or inp.intake_key
            if failed.code == Code.REF_INVALID:
                kept = None  # a refused reference is not recorded as the kept source
            return await self._conclude(inp, failed, kept)

    async def _after_staging(self, inp: DocumentInput, staged: StageResult) -> DocumentResult:
        valid = await self._step(
            r.VALIDATE, ValidationActivities.validate, _validate_input(inp, staged)
        )
        self._pages = valid.pages
        self._enter(DocState.VALIDATED, valid.worker)
        ocr = await self._step(
            r.OCR,
            OcrActivities.recognise,
            _ocr_input(inp, staged, valid),
            task_queue=inp.ocr_task_queue,
        )
        self._enter(DocState.RECOGNISED, ocr.worker)
        check = await self._step(r.CHECK, OutputActivities.check, _check_input(inp, valid, ocr))
        info = workflow.info()
        published = await self._step(
            r.PUBLISH,
            PublishActivities.publish,
            PublishInput(
                sha256=inp.sha256,
                tenant=inp.tenant,
                source_id=inp.source_id,
                source_key=staged.source_key,
                size_bytes=staged.size_bytes,
                media_type=valid.media_type,
                policy_version=valid.policy_version,
                ocr=ocr,
                check=check,
                # The record states its own publication; the rest is history.
                transitions=[*self._transitions, self._transition(DocState.PUBLISHED)],
                attempts=dict(self._attempts),
                workflow_id=info.workflow_id,
                run_id=info.run_id,
                packet_event=valid.packet_event,
                captured_at=inp.captured_at or inp.submitted_at,
                signer=inp.signer,
                source_sig=staged.source_sig,
            ),
        )
        self._enter(DocState.PUBLISHED, published.worker)
        return self._result(
            record_key=published.record_key,
            text_key=published.text_key,
            mean_confidence=check.mean_confidence,
        )

    async def _step(
        self,
        step: r.Step,
        method: Callable[[Activities, In], Out],
        arg: In,
        *,
        task_queue: str | None = None,
    ) -> Out:
        """Run one step of the table; classify a final failure into reject or quarantine."""
        try:
            result = await self._execute(step, method, arg, task_queue)
        except ActivityError as err:
            raise r.classify(step.name, err, step.retry) from err
        self._attempts[step.name] = result.attempt
        return result

    def _execute(
        self,
        step: r.Step,
        method: Callable[[Activities, In], R],
        arg: In,
        task_queue: str | None = None,
    ) -> Awaitable[R]:
        """Every step on the document's queue (OCR on its own) and in its priority lane."""
        queue = task_queue or self._input.io_task_queue
        return r.execute(step, method, arg, task_queue=queue, priority=self._priority())

    async def _conclude(
        self, inp: DocumentInput, failed: StepFailed, kept_key: str | None
    ) -> DocumentResult:
        self._code = failed.code
        self._attempts[failed.step] = failed.attempts
        self._enter(failed.state)
        info = workflow.info()
        concluded = await self._execute(
            r.CONCLUDE,
            PublishActivities.conclude,
            ConcludeInput(
                sha256=inp.sha256,
                tenant=inp.tenant,
                source_id=inp.source_id,
                state=failed.state,
                code=failed.code,
                attempts=dict(self._attempts),
                transitions=list(self._transitions),
                workflow_id=info.workflow_id,
                run_id=info.run_id,
                source_key=kept_key,
            ),
        )
        return self._result(record_key=concluded.outcome_key)

    @property
    def _input(self) -> DocumentInput:
        if self._inp is None:  # only reachable if run() was bypassed
            raise ApplicationError("workflow input missing", type=Code.INTERNAL.value)
        return self._inp

    def _priority(self) -> Priority:
        """Every step's place in its queue: the document's priority, the tenant's fair share.

        Within one priority the server takes tasks across fairness keys in
        proportion to their weights, so a tenant's scan storm queues behind
        itself, not in front of every other tenant.
        """
        inp = self._input
        return scheduling(inp.tenant, inp.priority, inp.fairness_weight)

    def _transition(self, state: DocState, by: str | None = None) -> Transition:
        return Transition(state=state, at=workflow.now(), by=by)

    def _enter(self, state: DocState, by: str | None = None) -> None:
        """``by``: the worker whose step led here, or the person who decided."""
        self._state = state
        self._transitions.append(self._transition(state, by))
        workflow.upsert_search_attributes(
            [STATE_KEY.value_set(state.value), REASON_KEY.value_set(self._code or "")]
        )
        # Shown in the UI beside the run: hashes, codes and counts only.
        detail = f"state={state.value} pages={self._pages}"
        workflow.set_current_details(detail + (f" code={self._code}" if self._code else ""))

    def _result(
        self,
        *,
        record_key: str | None = None,
        text_key: str | None = None,
        mean_confidence: float | None = None,
    ) -> DocumentResult:
        info = workflow.info()
        return DocumentResult(
            sha256=self._input.sha256,
            tenant=self._input.tenant,
            state=self._state,
            code=self._code,
            attempts=dict(self._attempts),
            pages=self._pages,
            mean_confidence=mean_confidence,
            record_key=record_key,
            text_key=text_key,
            workflow_id=info.workflow_id,
            run_id=info.run_id,
            transitions=list(self._transitions),
        )

    @workflow.query
    def status(self) -> DocumentStatus:
        return DocumentStatus(
            sha256=self._inp.sha256 if self._inp else "",
            tenant=self._inp.tenant if self._inp else None,
            state=self._state,
            code=self._code,
            attempts=dict(self._attempts),
            pages=self._pages,
            transitions=list(self._transitions),
        )


# Each step's input, from the document's input and the results before it.


def _stage_input(inp: DocumentInput) -> StageInput:
    return StageInput(
        sha256=inp.sha256, tenant=inp.tenant, intake_key=inp.intake_key, intake_sig=inp.intake_sig
    )


def _validate_input(inp: DocumentInput, staged: StageResult) -> ValidateInput:
    return ValidateInput(
        sha256=inp.sha256,
        tenant=inp.tenant,
        source_key=staged.source_key,
        source_id=inp.source_id,
        size_bytes=staged.size_bytes,
        captured_at=inp.captured_at or inp.submitted_at,
        signer=inp.signer,
        source_sig=staged.source_sig,
    )


def _ocr_input(inp: DocumentInput, staged: StageResult, valid: ValidationResult) -> OcrInput:
    return OcrInput(
        sha256=inp.sha256,
        tenant=inp.tenant,
        source_key=staged.source_key,
        media_type=valid.media_type,
        pages=valid.pages,
        source_sig=staged.source_sig,
    )


def _check_input(inp: DocumentInput, valid: ValidationResult, ocr: OcrResult) -> CheckInput:
    return CheckInput(
        sha256=inp.sha256,
        tenant=inp.tenant,
        expected_pages=valid.pages,
        page_keys=ocr.page_keys,
        page_sigs=ocr.page_sigs,
        document_type=inp.document_type,
    )
