"""One workflow per release: published documents, one recipient, one pinned policy.

    running -> prepare [-> awaiting_approval (two-person rule) -> approved]
            -> render -> record (egress event) -> deliver -> receipt -> delivered
          \\-> refused (not published, other tenant, unknown or revoked recipient,
                       unknown policy, source altered): nothing rendered, no event
          \\-> refused APPROVAL_EXPIRED (held for a second person nobody approved in time)
          \\-> failed  (the recipient stayed unreachable or said no): the egress
                       event stays, an ``egress.failed`` event closes it

The workflow ID derives from (tenant, recipient, policy hash, sorted document
hashes), so a repeated or concurrent request attaches to the same run and the
recipient receives the packet once. Each step is idempotent on its own: files
are created once and re-read on a retry, the egress event and the receipt are
appended once (``custody.state.egress.append_once``), and every channel
refuses to store a second copy. History carries keys, hashes and codes only.

Each step gets its own small input (``custody.release_steps.Inputs``) and its
result carries only what the step adds, with the attempt that made it. Every
step's options come from the step table in ``workflows.retries``. The
workflow is auto-upgrade on a versioned worker, so a release started before
these shapes replays and runs on here: without the ``release-step-models``
marker in its history it keeps sending the nested v1 inputs it began with
(``custody.release_steps_v1``), same commands, same options.

Under a policy's two-person rule (``custody.release_approval``) the release
waits after prepare, before anything is rendered, for the Update ``approve``
from a second identity; only a run that waits records the ``release-two-person``
marker, so a run prepared before the rule existed never waits on replay.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import Priority
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.approval import ApprovalActivities
    from activities.release import ReleaseActivities
    from custody import egress as eg
    from custody import release_steps as steps
    from custody import release_steps_v1 as v1
    from custody.errors import EGRESS_REFUSE_CODES, Code, ReleaseStepFailed
    from custody.queues import REASON_KEY, RECIPIENT_KEY, STATE_KEY, TENANT_KEY, scheduling
    from custody.release_approval import (
        APPROVE_UPDATE,
        Approval,
        ApprovalAnswer,
        ApprovalInput,
        Approved,
    )
    from workflows import retries as r
    from workflows.retries import Activities, Attempt, In

#: Marks a run that sends each step its own input (custody.release_steps).
STEP_MODELS_PATCH = "release-step-models"
#: Marks a run whose steps carry the tenant's fairness key and the release's priority.
FAIRNESS_PATCH = "release-fairness"
#: Marks a run held for a second person's approval (two-person rule); only such runs.
APPROVAL_PATCH = "release-two-person"

_REFUSALS = frozenset(c.value for c in EGRESS_REFUSE_CODES)


@workflow.defn(name=eg.RELEASE_WORKFLOW_NAME)
class ReleaseWorkflow:
    def __init__(self) -> None:
        self._state = eg.ReleaseState.RUNNING
        self._attempts: dict[str, int] = {}
        self._fair: eg.ReleaseInput | None = None  # set when the run carries fairness
        self._inp: eg.ReleaseInput | None = None
        self._awaiting = False  # held for a second person, until approved or expired
        self._approving = False  # an approval is being checked: a second one is refused
        self._approved: Approved | None = None

    @workflow.run
    async def run(self, inp: eg.ReleaseInput) -> eg.ReleaseResult:
        shapes = steps.Inputs(inp) if self._step_models() else v1.Inputs(inp)
        # Decided once, at the start: a run begun by a build before the patch keeps the
        # default priority after an upgrade, and records no marker in its middle.
        self._fair = inp if self._fairness() else None
        self._inp = inp
        self._set(eg.ReleaseState.RUNNING, None, inp)
        result = eg.ReleaseResult(
            release_id=inp.release_id,
            state=eg.ReleaseState.RUNNING,
            tenant=inp.tenant,
            recipient=inp.recipient,
            policy_sha256=inp.policy_sha256,
            documents=sorted(inp.documents),
            workflow_id=workflow.info().workflow_id,
        )
        try:
            prepared = await self._step(r.PREPARE, ReleaseActivities.prepare, shapes.prepare())
        except ReleaseStepFailed as f:
            # Nothing rendered, nothing left: a refusal, or a store that stayed down.
            state = eg.ReleaseState.REFUSED if f.code in _REFUSALS else eg.ReleaseState.FAILED
            return self._end(result, state, f.code, inp)
        result.policy = prepared.policy.name
        # Asked only of a run that must wait, so no other run records the marker.
        if prepared.needs_approval and workflow.patched(APPROVAL_PATCH):
            expired = await self._await_approval(inp)
            if expired is not None:  # nothing rendered, nothing recorded
                return self._end(result, eg.ReleaseState.REFUSED, expired, inp)
        try:
            rendered = await self._step(r.RENDER, ReleaseActivities.render, shapes.render(prepared))
            result.files = rendered.files
            recorded = await self._step(
                r.RECORD, ReleaseActivities.record, shapes.record(prepared, rendered)
            )
        except ReleaseStepFailed as f:
            return self._end(result, eg.ReleaseState.FAILED, f.code, inp)  # nothing left yet
        return await self._hand_over(inp, shapes, result, steps.Made(prepared, rendered, recorded))

    async def _hand_over(
        self,
        inp: eg.ReleaseInput,
        shapes: steps.Inputs | v1.Inputs,
        result: eg.ReleaseResult,
        made: steps.Made,
    ) -> eg.ReleaseResult:
        """Deliver what was recorded, then sign its receipt; or close the release failed."""
        try:
            delivery = r.deliver(inp.delivery)
            delivered = await self._step(delivery, ReleaseActivities.deliver, shapes.deliver(made))
        except ReleaseStepFailed as f:
            # Appended after the egress event; if even that fails, the result still says so.
            with contextlib.suppress(ReleaseStepFailed):
                await self._step(r.CLOSE, ReleaseActivities.close, shapes.close(made, f.code))
            return self._end(result, eg.ReleaseState.FAILED, f.code, inp)
        try:
            receipt = await self._step(
                r.RECEIPT, ReleaseActivities.receipt, shapes.receipt(made, delivered)
            )
        except ReleaseStepFailed as f:
            # The packet arrived; only its receipt is missing, which ``egress verify`` shows.
            return self._end(result, eg.ReleaseState.DELIVERED, f.code, inp)
        result.receipt_key = receipt.key
        return self._end(result, eg.ReleaseState.DELIVERED, None, inp)

    async def _await_approval(self, inp: eg.ReleaseInput) -> str | None:
        """Hold until a second person approves (None), or the deadline passes (its code)."""
        self._awaiting = True
        self._set(eg.ReleaseState.AWAITING_APPROVAL, None, inp)
        try:
            await workflow.wait_condition(
                lambda: self._approved is not None,
                timeout=timedelta(seconds=inp.approval_s),
                timeout_summary="approval-deadline",
            )
        except TimeoutError:
            self._awaiting = False
            # An approval being checked as the deadline passed is answered before the end.
            await workflow.wait_condition(workflow.all_handlers_finished)
            return Code.APPROVAL_EXPIRED.value
        self._awaiting = False
        self._set(eg.ReleaseState.RUNNING, None, inp)
        return None

    @workflow.update(name=APPROVE_UPDATE)
    async def approve(self, approval: Approval) -> ApprovalAnswer:
        self._approving = True  # first, before any await: a second approval now is refused
        inp = self._release
        step = ApprovalInput(
            release_id=inp.release_id,
            tenant=inp.tenant,
            requested_by=inp.actor,
            approval=approval,
        )
        try:
            approved = await self._step(r.APPROVE, ApprovalActivities.accept, step)
        except ReleaseStepFailed as f:
            self._approving = False  # refused: the release waits on, unchanged
            raise ApplicationError("approval refused", type=f.code, non_retryable=True) from None
        if not self._awaiting:  # the deadline passed while it was checked
            raise ApplicationError("the approval came too late", type=Code.APPROVAL_EXPIRED.value)
        self._approved = approved
        return ApprovalAnswer(
            release_id=inp.release_id,
            state=eg.ReleaseState.RUNNING,
            requested_by=inp.actor,
            approved_by=approved.approved_by,
        )

    @approve.validator
    def _validate_approval(self, approval: Approval) -> None:
        """Pure checks only: no store, no clock, no commands (the SDK's rule)."""
        if self._approving or self._approved is not None:
            raise ApplicationError("the release was already approved", type="ALREADY_DECIDED")
        if not self._awaiting:
            raise ApplicationError("the release waits for no approval", type="APPROVAL_NOT_PENDING")
        inp = self._release
        if approval.release_id != inp.release_id:
            raise ApplicationError("an approval of another release", type="DECISION_INVALID")
        if approval.by == inp.actor:
            raise ApplicationError("a second person must approve", type="SAME_APPROVER")

    @property
    def _release(self) -> eg.ReleaseInput:
        if self._inp is None:
            raise ApplicationError("workflow input missing", type=Code.INTERNAL.value)
        return self._inp

    def _step_models(self) -> bool:
        """Whether this run sends each step its own input: every run started since the patch."""
        return workflow.patched(STEP_MODELS_PATCH)

    async def _step(
        self, step: r.Step, method: Callable[[Activities, In], Attempt], arg: In
    ) -> Attempt:
        """Run one step of the table; a final failure is ``ReleaseStepFailed``.

        Either way the step's attempts are the real ones: as the result states
        them, or as the failure does (``workflows.retries.attempts_of``).
        """
        try:
            out = await r.execute(step, method, arg, priority=self._priority())
        except ActivityError as err:
            cause = err.cause
            code = cause.type if isinstance(cause, ApplicationError) and cause.type else None
            self._attempts[step.name] = r.attempts_of(err, step.retry)
            raise ReleaseStepFailed(code or Code.INTERNAL.value) from err
        self._attempts[step.name] = out.attempt
        return out

    def _fairness(self) -> bool:
        """Whether this run's steps carry the tenant's fairness key: every run since the patch."""
        return workflow.patched(FAIRNESS_PATCH)

    def _priority(self) -> Priority:
        """Each step's place in the shared I/O queue, as a document's steps have theirs: the
        tenant's fairness key, so one tenant's renders queue behind its own, not everyone's.

        Releases started before this patch keep the default, as they recorded it.
        """
        if self._fair is None:
            return Priority.default
        return scheduling(self._fair.tenant, self._fair.priority, None)

    def _end(
        self,
        result: eg.ReleaseResult,
        state: eg.ReleaseState,
        code: str | None,
        inp: eg.ReleaseInput,
    ) -> eg.ReleaseResult:
        self._set(state, code, inp)
        return result.model_copy(
            update={"state": state, "code": code, "attempts": dict(self._attempts)}
        )

    def _set(self, state: eg.ReleaseState, code: str | None, inp: eg.ReleaseInput) -> None:
        self._state = state
        workflow.upsert_search_attributes(
            [
                STATE_KEY.value_set(state.value),
                REASON_KEY.value_set(code or ""),
                TENANT_KEY.value_set(inp.tenant or ""),
                RECIPIENT_KEY.value_set(inp.recipient),
            ]
        )

    @workflow.query
    def state(self) -> str:
        return self._state.value
