"""One workflow per release: published documents, one recipient, one pinned policy.

    running -> prepare -> render -> record (egress event) -> deliver -> receipt -> delivered
          \\-> refused (not published, other tenant, unknown or revoked recipient,
                       unknown policy, source altered): nothing rendered, no event
          \\-> failed  (the recipient stayed unreachable or said no): the egress
                       event stays, an ``egress.failed`` event closes it

The workflow ID derives from (tenant, recipient, policy hash, sorted document
hashes), so a repeated or concurrent request attaches to the same run and the
recipient receives the packet once. Each step is idempotent on its own: files
are created once and re-read on a retry, the egress event and the receipt are
appended once (``custody.state.egress.append_once``), and every channel
refuses to store a second copy. History carries keys, hashes and codes only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from custody import egress as eg
    from custody.errors import (
        EGRESS_REFUSE_CODES,
        Code,
        ReleaseStepFailed,
    )
    from custody.queues import SA_REASON, SA_STATE, SA_TENANT
    from workflows import retries as r

STATE_KEY = SearchAttributeKey.for_keyword(SA_STATE)
REASON_KEY = SearchAttributeKey.for_keyword(SA_REASON)
TENANT_KEY = SearchAttributeKey.for_keyword(SA_TENANT)
RECIPIENT_KEY = SearchAttributeKey.for_keyword(eg.SA_RECIPIENT)

_REFUSALS = frozenset(c.value for c in EGRESS_REFUSE_CODES)

InT = TypeVar("InT")
OutT = TypeVar("OutT")


@workflow.defn(name=eg.RELEASE_WORKFLOW_NAME)
class ReleaseWorkflow:
    def __init__(self) -> None:
        self._state = eg.ReleaseState.RUNNING
        self._attempts: dict[str, int] = {}

    @workflow.run
    async def run(self, inp: eg.ReleaseInput) -> eg.ReleaseResult:
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
            prepared = await self._step(r.PREPARE, "custody.release.prepare", inp, eg.Prepared)
        except ReleaseStepFailed as f:
            # Nothing rendered, nothing left: a refusal, or a store that stayed down.
            state = eg.ReleaseState.REFUSED if f.code in _REFUSALS else eg.ReleaseState.FAILED
            return self._end(result, state, f.code, inp)
        result.policy = prepared.policy.name
        try:
            rendered = await self._step(r.RENDER, "custody.release.render", prepared, eg.Rendered)
            result.files = rendered.files
            recorded = await self._step(r.RECORD, "custody.release.record", rendered, eg.Recorded)
        except ReleaseStepFailed as f:
            return self._end(result, eg.ReleaseState.FAILED, f.code, inp)  # nothing left yet
        try:
            delivered = await self._step(
                r.deliver(inp.delivery), "custody.release.deliver", recorded, eg.Delivered
            )
        except ReleaseStepFailed as f:
            await self._close(recorded, f.code)
            return self._end(result, eg.ReleaseState.FAILED, f.code, inp)
        try:
            receipt = await self._step(
                r.RECEIPT,
                "custody.release.receipt",
                eg.ReceiptInput(recorded=recorded, delivered=delivered),
                eg.ReceiptRef,
            )
        except ReleaseStepFailed as f:
            # The packet arrived; only its receipt is missing, which ``egress verify`` shows.
            return self._end(result, eg.ReleaseState.DELIVERED, f.code, inp)
        result.receipt_key = receipt.key
        return self._end(result, eg.ReleaseState.DELIVERED, None, inp)

    async def _close(self, recorded: eg.Recorded, code: str) -> None:
        """Append ``egress.failed``; if even that fails, the result still says failed."""
        with contextlib.suppress(ReleaseStepFailed):
            await self._step(
                r.CLOSE,
                "custody.release.close",
                eg.CloseInput(recorded=recorded, code=code),
                eg.Recorded,
            )

    async def _step(self, step: r.Step, activity: str, arg: InT, result_type: type[OutT]) -> OutT:
        """Run one activity by its registered name; a final failure is ``ReleaseStepFailed``."""
        call: Callable[..., Awaitable[OutT]] = workflow.execute_activity
        try:
            out = await call(
                activity,
                arg,
                result_type=result_type,
                start_to_close_timeout=step.timeout,
                heartbeat_timeout=step.heartbeat,
                retry_policy=step.retry,
            )
        except ActivityError as err:
            cause = err.cause
            code = cause.type if isinstance(cause, ApplicationError) and cause.type else None
            self._attempts[step.name] = self._attempts.get(step.name, 0) + 1
            raise ReleaseStepFailed(code or Code.INTERNAL.value) from err
        self._attempts[step.name] = self._attempts.get(step.name, 0) + 1
        return out

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
