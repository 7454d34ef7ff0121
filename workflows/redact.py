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

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.redaction import RedactActivities
    from custody.redactions import REDACT_WORKFLOW_NAME, RedactInput, RedactResult
    from workflows import retries as r


@workflow.defn(name=REDACT_WORKFLOW_NAME)
class RedactWorkflow:
    @workflow.run
    async def run(self, inp: RedactInput) -> RedactResult:
        return await r.execute(r.REDACT, RedactActivities.redact, inp)
