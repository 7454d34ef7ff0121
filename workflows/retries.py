"""The whole retry and timeout story of both workflows, on one screen: the step table.

Each activity call is one :class:`Step`: its start-to-close timeout, retry
policy, heartbeat timeout and schedule-to-start bound. ``DocumentWorkflow``
and ``ReleaseWorkflow`` read these rows and nothing else, through
:func:`execute`, so every option a step runs with is written here once.

Transient faults (the store timing out, a worker lost, OCR crashing) are
retried with exponential backoff; the server adds no jitter, so the intervals
are kept coarse and the attempts capped. Codes that cannot improve on a retry
(rejections, HASH_MISMATCH, LOW_CONFIDENCE ...) are non-retryable: they fail the
activity at once. When attempts run out the workflow quarantines the document
with the last error code and the attempt count (``classify``); a release ends
failed (or refused) with that code.

``DocumentWorkflow`` is pinned and its histories must replay: a row it reads
changes only behind a patch, like any other command it issues.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol, TypeVar

from temporalio import workflow
from temporalio.common import Priority, RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    RetryState,
    TimeoutError,
    TimeoutType,
)

from custody.egress import DeliveryTuning
from custody.errors import NON_RETRYABLE_CODES, REJECT_CODES, Code
from custody.errors import StepFailed as StepFailed
from custody.models import DocState

NEVER_RETRY = sorted(NON_RETRYABLE_CODES)


@dataclass(frozen=True)
class Step:
    """How one activity runs: everything its call states besides the input and the queue.

    ``name`` keys the step's attempts in results. ``queue_bound`` is how long one
    attempt may wait in its task queue for a worker (schedule-to-start); None
    waits however long it takes.
    """

    name: str
    timeout: timedelta
    retry: RetryPolicy
    heartbeat: timedelta | None = None
    queue_bound: timedelta | None = None


# --- documents (workflows/document.py) ------------------------------------------

#: stage, validate, check: cheap and local; a few quick retries ride out a blip.
IO_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    non_retryable_error_types=NEVER_RETRY,
)

#: OCR is expensive: three attempts, then quarantine (``attempt=3 code=OCR_TIMEOUT``).
OCR_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
    maximum_attempts=3,
    non_retryable_error_types=NEVER_RETRY,
)

#: Publishing follows paid-for OCR, so it outlasts a longer storage outage
#: (about 15 minutes of backoff) before the document is quarantined.
PUBLISH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=2),
    maximum_attempts=12,
    non_retryable_error_types=NEVER_RETRY,
)

#: Recording a rejection or quarantine must not be lost either.
CONCLUDE_RETRY = PUBLISH_RETRY

#: stage, validate, check: the I/O worker heartbeats for them while they run
#: (``workers.interceptors.HeartbeatKeeper``), so an attempt lost between the
#: server and a worker is retried after this, not at the end of its timeout.
IO_HEARTBEAT = timedelta(seconds=20)

# Queue bounds: admission bounds the backlog (about 500 documents), so these lie
# well beyond any admitted queue's drain: past them no worker is taking the queue
# at all. The server never retries such a timeout; the document is quarantined
# QUEUE_STALLED with its source kept, and ``custody quarantine release`` runs it
# again once workers are back. Quarantine rather than waiting on: an absent fleet
# is an outage a person must see, and requeueing behind it would only hide it.
# Check and publish follow paid-for OCR, and conclude records an outcome: they
# wait for a worker however long it takes rather than throw that work away.
STAGE = Step("stage", timedelta(minutes=2), IO_RETRY, IO_HEARTBEAT, timedelta(minutes=30))
#: The decoder child has its own 30 s bound inside the two minutes.
VALIDATE = Step("validate", timedelta(minutes=2), IO_RETRY, IO_HEARTBEAT, timedelta(minutes=30))
#: A whole document's OCR; each page (detection + recognition) must heartbeat
#: within 45 s, or the attempt is abandoned and retried from the last finished page.
OCR = Step("ocr", timedelta(minutes=30), OCR_RETRY, timedelta(seconds=45), timedelta(hours=2))
CHECK = Step("check", timedelta(minutes=1), IO_RETRY, IO_HEARTBEAT)
#: Publish heartbeats between its writes, so a worker lost mid-publish is
#: noticed in seconds, not at the end of its two minutes.
PUBLISH = Step("publish", timedelta(minutes=2), PUBLISH_RETRY, timedelta(seconds=30))
CONCLUDE = Step("conclude", timedelta(minutes=1), CONCLUDE_RETRY)


# --- reviews (workflows/review.py) ----------------------------------------------

#: A decision's check (identity, signature, sealed corrections): quick, a few retries;
#: a refusal (OPERATOR_REVOKED, DECISION_INVALID ...) is final for that decision.
REVIEW_ACCEPT = Step("review_accept", timedelta(minutes=1), IO_RETRY, IO_HEARTBEAT)
#: The derived version and its event follow a published record: they outlast an outage.
REVIEW_RECORD = Step("review_record", timedelta(minutes=2), PUBLISH_RETRY, IO_HEARTBEAT)
#: The page images a reviewer sees, rendered in the sandboxed child when review begins.
REVIEW_PAGES = Step("review_pages", timedelta(minutes=5), IO_RETRY, IO_HEARTBEAT)
#: The escalation's ledger event, once the deadline passed.
REVIEW_OVERDUE = Step("review_overdue", timedelta(minutes=1), CONCLUDE_RETRY)


# --- releases (workflows/release.py) --------------------------------------------

#: prepare, record, receipt, close: store work; ride out an outage like publish does.
RELEASE_STORE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=10,
    non_retryable_error_types=NEVER_RETRY,
)
#: Rendering is deterministic work on verified bytes: a few attempts.
RELEASE_RENDER_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=3,
    non_retryable_error_types=NEVER_RETRY,
)
#: The I/O worker heartbeats for every release step while it runs.
RELEASE_HEARTBEAT = timedelta(seconds=15)

PREPARE = Step("prepare", timedelta(minutes=2), RELEASE_STORE_RETRY, RELEASE_HEARTBEAT)
RENDER = Step("render", timedelta(minutes=20), RELEASE_RENDER_RETRY, RELEASE_HEARTBEAT)
RECORD = Step("record", timedelta(minutes=2), RELEASE_STORE_RETRY, RELEASE_HEARTBEAT)
RECEIPT = Step("receipt", timedelta(minutes=2), RELEASE_STORE_RETRY, RELEASE_HEARTBEAT)
CLOSE = Step("close", timedelta(minutes=2), RELEASE_STORE_RETRY, RELEASE_HEARTBEAT)
#: A second person's approval checked and kept (two-person rule): store work; a refusal
#: (SAME_APPROVER, OPERATOR_REVOKED ...) is final for that approval, the release waits on.
APPROVE = Step("approve", timedelta(minutes=1), RELEASE_STORE_RETRY, RELEASE_HEARTBEAT)

# --- redacted views (workflows/redact.py) ---------------------------------------

#: A view OCRs its pages, as a redacted release's render does: the same work, the
#: same story (up to 20 minutes, a few attempts), with a page's minute to heartbeat.
REDACT = Step("redact", RENDER.timeout, RELEASE_RENDER_RETRY, timedelta(seconds=60))


def deliver(tuning: DeliveryTuning) -> Step:
    """Delivery waits out a recipient that is down, then fails with the channel's code.

    Tries per delivery: this retry policy is the only one. Each attempt tries
    once (one HTTPS POST; to S3 or an outbox, one write of each file not yet
    there, botocore's own retries off), within ``CUSTODY_EGRESS_PUSH_DEADLINE_S``
    (60 s). So a release tries its recipient at most ``tuning.max_attempts``
    times: ``CUSTODY_EGRESS_DELIVERY_ATTEMPTS``, 8 by default, 5 s doubling to
    300 s apart (about 10 minutes of waiting). The channel's own loop used to
    try 3 times inside each attempt: 24 in all. The tuning is the starting
    client's settings, pinned in the release's input.
    """
    retry = RetryPolicy(
        initial_interval=timedelta(seconds=tuning.initial_interval_s),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=tuning.maximum_interval_s),
        maximum_attempts=tuning.max_attempts,
        non_retryable_error_types=NEVER_RETRY,
    )
    return Step("deliver", timedelta(minutes=5), retry, RELEASE_HEARTBEAT)


# --- running a step -------------------------------------------------------------


class Attempted(Protocol):
    """Every step's result states the attempt that made it (``activity.info().attempt``)."""

    @property
    def attempt(self) -> int: ...


# The activity class, its input model and its result model: a step takes its types
# from the method it runs, as ``execute_activity_method`` does (every workflow's).
Activities = TypeVar("Activities")
In = TypeVar("In")
Out = TypeVar("Out")
#: A result that states its attempt, for a workflow that counts them.
Attempt = TypeVar("Attempt", bound=Attempted)


async def execute(
    step: Step,
    method: Callable[[Activities, In], Out],
    arg: In,
    *,
    task_queue: str | None = None,
    priority: Priority = Priority.default,
) -> Out:
    """Run ``method`` with ``step``'s options: the one place either workflow calls an activity.

    Typed by the activity method, as ``execute_activity_method`` is, so a
    result's fields are checked where they are used.
    """
    return await workflow.execute_activity_method(
        method,
        arg,
        task_queue=task_queue,
        start_to_close_timeout=step.timeout,
        schedule_to_start_timeout=step.queue_bound,
        heartbeat_timeout=step.heartbeat,
        retry_policy=step.retry,
        priority=priority,
    )


def classify(step: str, err: ActivityError, retry: RetryPolicy) -> StepFailed:
    """Map an activity's final failure to the outcome and the code it keeps."""
    cause = err.cause
    attempts = attempts_of(err, retry)
    if isinstance(cause, ApplicationError) and cause.type:
        code = cause.type if cause.type in Code.__members__ else Code.INTERNAL.value
        if code in REJECT_CODES:
            return StepFailed(step, DocState.REJECTED, code, attempts)
        return StepFailed(step, DocState.QUARANTINED, code, attempts)
    if isinstance(cause, TimeoutError) and cause.type == TimeoutType.SCHEDULE_TO_START:
        # No worker took the task within its bound: the queue, not the document.
        return StepFailed(step, DocState.QUARANTINED, Code.QUEUE_STALLED.value, attempts)
    if isinstance(cause, TimeoutError):
        # The server gave up on a silent attempt: no code came from the activity.
        code = Code.OCR_TIMEOUT if step == "ocr" else Code.IO_TIMEOUT
        return StepFailed(step, DocState.QUARANTINED, code.value, attempts)
    return StepFailed(step, DocState.QUARANTINED, Code.INTERNAL.value, attempts)


def attempts_of(err: ActivityError, retry: RetryPolicy) -> int:
    """The attempt that failed last: as the activity stated it, else as the server ended it."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.details:
        detail = cause.details[0]
        if isinstance(detail, dict) and isinstance(detail.get("attempt"), int):
            return int(detail["attempt"])
    if err.retry_state == RetryState.MAXIMUM_ATTEMPTS_REACHED:
        return retry.maximum_attempts
    return 1
