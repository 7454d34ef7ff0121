"""A preview: one activity on the OCR workers' queue, started by the edge and gone in seconds.

The workflow exists because a Temporal client starts work through a workflow:
it carries the edge's request to where OCR runs, and its history holds the
scratch keys, the hash, the page count and the engine's name, never the text
(``custody.previews``). Deterministic code only.

Its retry story, on one screen: one attempt, never retried (the caller asks
again, and the deadline leaves no time for a second); the whole attempt,
queue wait included, within the edge's deadline plus a grace in which the
activity, which stops itself at the deadline, reports so; a heartbeat so a lost
worker shows in seconds. The preview goes ahead of queued documents on the OCR
queue (the reserved lane's priority), shared fairly between tenants.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import Priority, RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.preview import PreviewActivities
    from custody.previews import PREVIEW_WORKFLOW_NAME, PreviewInput, PreviewResult
    from custody.queues import PRIORITY_RESERVED, fairness_key

#: One attempt: a preview is asked again by its caller, not retried here.
_RETRY = RetryPolicy(maximum_attempts=1)
#: Past the deadline the activity stops before its next page; this is how long
#: one page may still take to end before the server gives up on the attempt.
_GRACE = timedelta(seconds=10)
_HEARTBEAT = timedelta(seconds=15)


@workflow.defn(name=PREVIEW_WORKFLOW_NAME)
class PreviewWorkflow:
    @workflow.run
    async def run(self, inp: PreviewInput) -> PreviewResult:
        ahead = Priority(priority_key=PRIORITY_RESERVED, fairness_key=fairness_key(inp.tenant))
        return await workflow.execute_activity_method(
            PreviewActivities.preview,
            inp,
            task_queue=inp.ocr_task_queue,
            schedule_to_close_timeout=timedelta(seconds=inp.deadline_s) + _GRACE,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
            priority=ahead,
        )
