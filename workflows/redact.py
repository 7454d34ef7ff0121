"""A redacted view, made on the I/O workers: one activity, asked by ``custody redact``.

The workflow carries the caller's request to where views are made; its
history holds the document's hash, the policy (field and detector names) and
the approver, and the view's key and hash back: never a removed string
(``custody.redactions``). Deterministic code only.

Its retry story, on one screen: a view OCRs its pages, so a step of up to
20 minutes with a heartbeat; a few attempts with backoff for a worker lost or
a store outage; never again for what a retry cannot change (a document not
published here, a leak the check found, evidence that no longer hashes).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.redaction import RedactActivities
    from custody.redactions import REDACT_WORKFLOW_NAME, RedactInput, RedactResult
    from workflows.retries import NEVER_RETRY

_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=3,
    non_retryable_error_types=NEVER_RETRY,
)
_TIMEOUT = timedelta(minutes=20)
_HEARTBEAT = timedelta(seconds=60)


@workflow.defn(name=REDACT_WORKFLOW_NAME)
class RedactWorkflow:
    @workflow.run
    async def run(self, inp: RedactInput) -> RedactResult:
        return await workflow.execute_activity_method(
            RedactActivities.redact,
            inp,
            start_to_close_timeout=_TIMEOUT,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
        )
