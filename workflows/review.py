"""A document waiting for a person: the run the document workflow continues as.

    review --(decide: approve)--> published    (the record as read + a derived version)
           \\-(decide: reject CODE)--> rejected (the reviewer's code)
           \\-(deadline)--> escalated (review_overdue), still waiting
           \\-(expiry)--> quarantined REVIEW_EXPIRED, the source kept

``DocumentWorkflow`` is pinned to the build that started it, which suits a run
of minutes; a review can wait for days, across deploys. So the document
workflow does not wait itself: it continues as this workflow type, under the
same workflow id, carrying every step's result by reference
(``custody.reviews.ReviewInput``). This type auto-upgrades on a versioned
worker (``workers.versioning``): a document in review moves to the current
build at its next task, and every change here must replay its saved histories
(``tests/workflows/histories/review-*.json``). In the Temporal UI the document
shows as a *Running* ``DocumentReview``, without any column added.

The decision is a Workflow Update with a validator. The validator is pure: it
refuses a decision while another is being applied or after one took effect
(``ALREADY_DECIDED``), and one whose shape is wrong; everything that needs the
store (the reviewer's identity and signature, the sealed corrections) is
checked by the ``review_accept`` step inside the handler, and a refusal there
leaves the document in review, unchanged. The handler answers once the
document is published or rejected: ``{state, reviewed_by}``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.publish import PublishActivities
    from activities.review import ReviewActivities
    from custody.errors import REVIEW_REJECT_CODES, Code
    from custody.models import (
        DocState,
        DocumentResult,
    )
    from custody.queues import scheduling
    from custody.reviews import (
        DECIDE_UPDATE,
        OVERDUE_REASON,
        REVIEW_QUERY,
        REVIEW_WORKFLOW_NAME,
        Accepted,
        Answer,
        Decision,
        OverdueInput,
        RecordReviewInput,
        ReviewInput,
        ReviewStatus,
    )
    from workflows import retries as r
    from workflows.document_run import OUTCOME_TYPES, DocumentRun
    from workflows.retries import Activities, In, Out

_REJECT = frozenset(c.value for c in REVIEW_REJECT_CODES)


@workflow.defn(name=REVIEW_WORKFLOW_NAME)
class ReviewWorkflow(DocumentRun):
    def __init__(self) -> None:
        super().__init__(DocState.REVIEW)
        self._inp: ReviewInput | None = None
        self._deciding = False
        self._accepted: Accepted | None = None
        self._decision: Decision | None = None
        self._overdue = False
        self._done = False

    @workflow.run
    async def run(self, inp: ReviewInput) -> DocumentResult:
        self._inp, self._doc, self._pages = inp, inp.document, inp.valid.pages
        self._transitions = list(inp.transitions)
        self._attempts = dict(inp.attempts)
        self._show(inp.reasons[0] if inp.reasons else None)
        decided = await self._wait(inp.deadline_s)
        if not decided:
            self._overdue = True
            self._show(OVERDUE_REASON)
            await self._escalate(inp)
            decided = await self._wait(max(inp.expiry_s - inp.deadline_s, 1.0))
        if not decided:
            result = await self._conclude(DocState.QUARANTINED, Code.REVIEW_EXPIRED.value, None)
        elif self._decision is not None and self._decision.verdict == "reject":
            result = await self._reject(self._decision)
        else:
            result = await self._approve()
        self._done = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        if result.state in OUTCOME_TYPES:  # as the document workflow ends (workflows.outcomes)
            workflow.continue_as_new(args=[result], workflow=OUTCOME_TYPES[result.state])
        return result

    async def _wait(self, seconds: float) -> bool:
        try:
            await workflow.wait_condition(
                lambda: self._accepted is not None,
                timeout=timedelta(seconds=seconds),
                timeout_summary="review-deadline",
            )
        except TimeoutError:
            return False
        return True

    async def _escalate(self, inp: ReviewInput) -> None:
        overdue = OverdueInput(
            sha256=inp.document.sha256,
            tenant=inp.document.tenant,
            reasons=list(inp.reasons),
            waited_s=inp.deadline_s,
        )
        await self._run(r.REVIEW_OVERDUE, ReviewActivities.overdue, overdue)

    # --- the decision ---------------------------------------------------------------

    @workflow.update(name=DECIDE_UPDATE)
    async def decide(self, decision: Decision) -> Answer:
        self._deciding = True  # first, before any await: a second decision now is refused
        try:
            accepted: Accepted = await self._run(
                r.REVIEW_ACCEPT, ReviewActivities.accept, self._step_input(decision)
            )
        except ActivityError as err:
            self._deciding = False  # refused: the document waits on, unchanged
            raise _refused(err) from None
        self._decision, self._accepted = decision, accepted
        await workflow.wait_condition(lambda: self._done)
        return Answer(state=self._state, reviewed_by=accepted.reviewed_by, code=self._code)

    @decide.validator
    def _validate(self, decision: Decision) -> None:
        """Pure checks only: no store, no clock, no commands (the SDK's rule)."""
        if self._deciding or self._accepted is not None or self._done:
            raise ApplicationError("the review was already decided", type="ALREADY_DECIDED")
        if decision.verdict == "reject" and decision.reject_code not in _REJECT:
            raise ApplicationError("--reject takes a code from the list", type="USAGE")
        if decision.verdict == "reject" and (decision.fields or decision.lines):
            raise ApplicationError("a rejection corrects nothing", type="USAGE")
        pages = self._input.valid.pages
        if any(not 1 <= page <= pages or line < 1 for page, line in decision.lines):
            raise ApplicationError(f"pages count from 1 to {pages}", type="USAGE")

    @workflow.query(name=REVIEW_QUERY)
    def review(self) -> ReviewStatus:
        inp = self._input
        return ReviewStatus(
            sha256=inp.document.sha256,
            tenant=inp.document.tenant,
            reasons=list(inp.reasons),
            fields_needing_review=list(inp.check.fields_review),
            waiting_since=self._transitions[-1].at if self._transitions else workflow.now(),
            overdue=self._overdue,
            decided=self._accepted is not None,
            pages=inp.valid.pages,
            document_type=inp.check.document_type,
            released_by=inp.released_by,
            page_keys=list(inp.page_keys),
            fields_key=inp.check.fields_key,
            fields_sig=inp.check.fields_sig,
            text_keys=list(inp.ocr.page_keys),
            text_sigs=list(inp.ocr.page_sigs),
        )

    # --- the outcomes ---------------------------------------------------------------

    async def _approve(self) -> DocumentResult:
        inp, reviewer = self._input, self._reviewer()
        publish = self._publish_input(
            inp.document, inp.staged, inp.valid, inp.ocr, inp.check, by=reviewer
        )
        published = await self._run(r.PUBLISH, PublishActivities.publish, publish)
        self._attempts["publish"] = published.attempt
        self._enter(DocState.PUBLISHED, reviewer)
        await self._record(published.record_key)
        return self._result(inp.document, published, mean_confidence=inp.check.mean_confidence)

    async def _reject(self, decision: Decision) -> DocumentResult:
        code = decision.reject_code or Code.OTHER.value
        result = await self._conclude(DocState.REJECTED, code, self._reviewer())
        await self._record(None)
        return result

    async def _record(self, record_key: str | None) -> None:
        """The derived version beside the evidence: once per decision."""
        if self._decision is None:
            return
        step = self._step_input(self._decision, record_key, self._reviewer())
        await self._run(r.REVIEW_RECORD, ReviewActivities.record, step)

    def _reviewer(self) -> str:
        if self._accepted is None:  # only reachable if the wait ended without a decision
            raise ApplicationError("no accepted decision", type=Code.INTERNAL.value)
        return self._accepted.reviewed_by

    async def _conclude(self, state: DocState, code: str, by: str | None) -> DocumentResult:
        inp = self._input
        self._code = code
        self._enter(state, by)
        conclude = self._conclude_input(inp.document, code, inp.staged.source_key)
        concluded = await self._run(r.CONCLUDE, PublishActivities.conclude, conclude)
        return self._result(
            inp.document,
            record_key=concluded.outcome_key,
            mean_confidence=inp.check.mean_confidence,
        )

    # --- plumbing -------------------------------------------------------------------

    def _step_input(
        self, decision: Decision, record_key: str | None = None, reviewer: str = ""
    ) -> RecordReviewInput:
        """The scratch OCR output's references; once published, the record's own copies."""
        inp, info = self._input, workflow.info()
        return RecordReviewInput(
            sha256=inp.document.sha256,
            tenant=inp.document.tenant,
            decision=decision,
            reviewed_by=reviewer,
            record_key=record_key,
            fields_key=inp.check.fields_key,
            fields_sig=inp.check.fields_sig,
            text_sha256=inp.check.text_sha256,
            page_keys=list(inp.ocr.page_keys),
            page_sigs=list(inp.ocr.page_sigs),
            workflow_id=info.workflow_id,
            run_id=info.run_id,
        )

    async def _run(self, step: r.Step, method: Callable[[Activities, In], Out], arg: In) -> Out:
        """Every step on the document's I/O queue, in its priority lane."""
        d = self._input.document
        priority = scheduling(d.tenant, d.priority, d.fairness_weight)
        return await r.execute(step, method, arg, task_queue=d.io_task_queue, priority=priority)

    @property
    def _input(self) -> ReviewInput:
        if self._inp is None:
            raise ApplicationError("workflow input missing", type=Code.INTERNAL.value)
        return self._inp


def _refused(err: ActivityError) -> ApplicationError:
    """The accept step's refusal, as the update's failure (its code kept)."""
    cause = err.cause
    code = cause.type if isinstance(cause, ApplicationError) and cause.type else "INTERNAL"
    message = cause.message if isinstance(cause, ApplicationError) else "refused"
    return ApplicationError(message, type=code, non_retryable=True)
