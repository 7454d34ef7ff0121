"""One workflow per document, its ID derived from the SHA-256 of its bytes.

accepted -> staged -> validated -> recognised -> published
                 \\-> rejected (a rule broken; no OCR spent)
                 \\-> quarantined (hash mismatch, attempts exhausted)
                                  \\-> review (a person must look: continued as
                                              ``DocumentReview``, workflows.review)
         (any step) -> cancelled (the workflow was cancelled: its own outcome)

Behind patches, so histories recorded before them replay as they ran:
``review-state`` (what a person can resolve waits in review instead of being
quarantined: low confidence, the review band, language, fields the policy
holds back), ``outcome-types`` (a rejected or quarantined document continues
as a run of type ``DocumentRejected`` or ``DocumentQuarantined``: the Temporal
UI's list tells them from published ones by type alone) and ``cancelled``.

Deterministic code only: no disk, clock or network. History carries object
keys, hashes, counts and codes, never document bytes or text. Each object key
travels with the signature its creator made (``custody.refs``); the workflow
only passes signatures on, and activities check them before opening anything.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import NoReturn

from temporalio import workflow
from temporalio.common import Priority
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from activities.ocr import OcrActivities
    from activities.output import OutputActivities
    from activities.publish import PublishActivities
    from activities.review_pages import ReviewPages
    from activities.staging import StagingActivities
    from activities.validation import ValidationActivities
    from custody.errors import Code, StepCancelled
    from custody.models import (
        CheckInput,
        CheckResult,
        ConcludeResult,
        DocState,
        DocumentInput,
        DocumentResult,
        OcrInput,
        OcrResult,
        StageInput,
        StageResult,
        ValidateInput,
        ValidationResult,
        fields_among,
        fields_from,
    )
    from custody.queues import WORKFLOW_NAME, scheduling
    from custody.reviews import (
        RELEASE_UPDATE,
        RELEASED,
        REVIEW_WORKFLOW_NAME,
        QuarantineRelease,
        ReviewInput,
        ReviewPagesInput,
    )
    from workflows import retries as r
    from workflows.document_run import OUTCOME_TYPES, DocumentRun
    from workflows.retries import Activities, Attempt, In, Out, StepFailed

#: Patches (see the module docstring): each marks the runs that took the new path.
REVIEW_PATCH = "review-state"
OUTCOME_PATCH = "outcome-types"
CANCEL_PATCH = "cancelled"


@workflow.defn(name=WORKFLOW_NAME)
class DocumentWorkflow(DocumentRun):
    def __init__(self) -> None:
        super().__init__(DocState.ACCEPTED)
        self._released: QuarantineRelease | None = None

    @workflow.run
    async def run(self, inp: DocumentInput) -> DocumentResult:
        self._doc = inp
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
        except (asyncio.CancelledError, StepCancelled):
            if not workflow.patched(CANCEL_PATCH):
                raise
            await self._cancelled(inp, source_key or inp.intake_key)
            raise asyncio.CancelledError() from None

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
        reviews = workflow.patched(REVIEW_PATCH)
        check = await self._step(
            r.CHECK, OutputActivities.check, _check_input(inp, valid, ocr, review=reviews)
        )
        if reviews and (check.review_reasons or self._released is not None):
            await self._review(inp, staged, valid, ocr, check)
        published = await self._step(
            r.PUBLISH,
            PublishActivities.publish,
            self._publish_input(inp, staged, valid, ocr, check),
        )
        self._enter(DocState.PUBLISHED, published.worker)
        return self._result(inp, published, mean_confidence=check.mean_confidence)

    async def _review(
        self,
        inp: DocumentInput,
        staged: StageResult,
        valid: ValidationResult,
        ocr: OcrResult,
        check: CheckResult,
    ) -> NoReturn:
        """Hand over to the review run: same id, every result by reference (workflows.review).

        The page images reviewers see are rendered first, so a document shows in
        review with them; without them (a render that failed) it waits all the same.
        """
        pages: list[str] = []
        with contextlib.suppress(ActivityError):
            rendered = await self._execute(
                r.REVIEW_PAGES, ReviewPages.render, _pages_input(inp, staged, valid)
            )
            pages = list(rendered.keys)
        self._enter(DocState.REVIEW, check.worker)
        released = self._released
        reasons = [*check.review_reasons, *([RELEASED] if released else [])]
        review = ReviewInput(
            document=inp,
            staged=staged,
            valid=valid,
            ocr=ocr,
            check=check,
            transitions=list(self._transitions),
            attempts=dict(self._attempts),
            reasons=reasons,
            deadline_s=inp.review_deadline_s,
            expiry_s=inp.review_expiry_s,
            released_by=released.by if released else None,
            page_keys=pages,
        )
        workflow.continue_as_new(args=[review], workflow=REVIEW_WORKFLOW_NAME)

    @workflow.update(name=RELEASE_UPDATE)
    def release_from_quarantine(self, release: QuarantineRelease) -> str:
        """A person released this document from quarantine: it ends in review (this run's id)."""
        self._released = release
        return workflow.info().run_id

    @release_from_quarantine.validator
    def _validate_release(self, release: QuarantineRelease) -> None:
        if self._released is not None or self._state in _ENDED:
            raise ApplicationError("this run was already released", type="ALREADY_DECIDED")

    async def _step(
        self,
        step: r.Step,
        method: Callable[[Activities, In], Attempt],
        arg: In,
        *,
        task_queue: str | None = None,
    ) -> Attempt:
        """Run one step of the table; classify a final failure into reject or quarantine."""
        try:
            result = await self._execute(step, method, arg, task_queue)
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):  # the workflow was cancelled meanwhile
                raise StepCancelled(step.name) from err
            raise r.classify(step.name, err, step.retry) from err
        self._attempts[step.name] = result.attempt
        return result

    def _execute(
        self,
        step: r.Step,
        method: Callable[[Activities, In], Out],
        arg: In,
        task_queue: str | None = None,
    ) -> Awaitable[Out]:
        """Every step on the document's queue (OCR on its own) and in its priority lane."""
        queue = task_queue or self._document.io_task_queue
        return r.execute(step, method, arg, task_queue=queue, priority=self._priority())

    async def _conclude(
        self, inp: DocumentInput, failed: StepFailed, kept_key: str | None
    ) -> DocumentResult:
        self._code = failed.code
        self._attempts[failed.step] = failed.attempts
        concluded = await self._record_outcome(inp, failed.state, failed.code, kept_key)
        result = self._result(inp, record_key=concluded.outcome_key)
        if workflow.patched(OUTCOME_PATCH):
            workflow.continue_as_new(args=[result], workflow=OUTCOME_TYPES[failed.state])
        return result

    async def _cancelled(self, inp: DocumentInput, kept_key: str) -> None:
        """Record the cancellation as its own outcome, then let the run end cancelled."""
        self._code = Code.CANCELLED.value
        await self._record_outcome(inp, DocState.CANCELLED, Code.CANCELLED.value, kept_key)

    async def _record_outcome(
        self, inp: DocumentInput, state: DocState, code: str, kept_key: str | None
    ) -> ConcludeResult:
        """Enter ``state`` and record it as the document's outcome (the conclude step)."""
        self._enter(state)
        conclude = self._conclude_input(inp, code, kept_key, inp.document_type)
        return await self._execute(r.CONCLUDE, PublishActivities.conclude, conclude)

    def _priority(self) -> Priority:
        """Every step's place in its queue: the document's priority, the tenant's fair share.

        Within one priority the server takes tasks across fairness keys in
        proportion to their weights, so a tenant's scan storm queues behind
        itself, not in front of every other tenant.
        """
        inp = self._document
        return scheduling(inp.tenant, inp.priority, inp.fairness_weight)


# Each step's input, from the document's input and the results before it.


def _stage_input(inp: DocumentInput) -> StageInput:
    return StageInput(**fields_from(StageInput, inp))


def _validate_input(inp: DocumentInput, staged: StageResult) -> ValidateInput:
    """The staged source's size; the capture time the submitter's, else the submission's."""
    return ValidateInput(
        **fields_among(
            ValidateInput,
            inp,
            staged,
            size_bytes=staged.size_bytes,
            captured_at=inp.captured_at or inp.submitted_at,
        )
    )


def _ocr_input(inp: DocumentInput, staged: StageResult, valid: ValidationResult) -> OcrInput:
    return OcrInput(**fields_among(OcrInput, inp, staged, valid))


def _pages_input(
    inp: DocumentInput, staged: StageResult, valid: ValidationResult
) -> ReviewPagesInput:
    """The pages a reviewer sees: the same source, signature and pages as OCR read."""
    return ReviewPagesInput(**_ocr_input(inp, staged, valid).model_dump())


def _check_input(
    inp: DocumentInput, valid: ValidationResult, ocr: OcrResult, *, review: bool = False
) -> CheckInput:
    found = {"expected_pages": valid.pages, "review": review}
    return CheckInput(**fields_among(CheckInput, inp, ocr, **found))


_ENDED = frozenset({DocState.PUBLISHED, DocState.REJECTED, DocState.QUARANTINED, DocState.REVIEW})
