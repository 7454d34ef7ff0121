"""The whole retry and timeout story of a document, on one screen.

Transient faults (the store timing out, a worker lost, OCR crashing) are
retried with exponential backoff; the server adds no jitter, so the intervals
are kept coarse and the attempts capped. Codes that cannot improve on a retry
(rejections, HASH_MISMATCH, LOW_CONFIDENCE ...) are non-retryable: they fail the
activity at once. When attempts run out the workflow quarantines the document
with the last error code and the attempt count (``classify``).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    RetryState,
    TimeoutError,
    TimeoutType,
)

from custody.errors import NON_RETRYABLE_CODES, REJECT_CODES, Code
from custody.errors import StepFailed as StepFailed
from custody.models import DocState

NEVER_RETRY = sorted(NON_RETRYABLE_CODES)

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

STAGE_TIMEOUT = timedelta(minutes=2)
VALIDATE_TIMEOUT = timedelta(minutes=2)  # the decoder child has its own 30 s bound
CHECK_TIMEOUT = timedelta(minutes=1)
PUBLISH_TIMEOUT = timedelta(minutes=2)
#: stage, validate, check: the I/O worker heartbeats for them while they run
#: (``workers.interceptors.HeartbeatKeeper``), so an attempt lost between the
#: server and a worker is retried after this, not at the end of its timeout.
IO_HEARTBEAT = timedelta(seconds=20)
#: Publish heartbeats between its writes, so a worker lost mid-publish is
#: noticed in seconds, not at the end of ``PUBLISH_TIMEOUT``.
PUBLISH_HEARTBEAT = timedelta(seconds=30)
CONCLUDE_TIMEOUT = timedelta(minutes=1)
#: A whole document's OCR; pages heartbeat, so a lost worker shows in
#: ``OCR_HEARTBEAT`` rather than here.
OCR_TIMEOUT = timedelta(minutes=30)
#: A page (detection + recognition) must finish within this, or the attempt is
#: abandoned and retried from the last finished page.
OCR_HEARTBEAT = timedelta(seconds=45)

# Schedule-to-start: how long one attempt may wait in its task queue for a
# worker. Admission bounds the backlog (about 500 documents), so these lie well
# beyond any admitted queue's drain: past them no worker is taking the queue at
# all. The server never retries such a timeout; the document is quarantined
# QUEUE_STALLED with its source kept, and ``custody quarantine release`` runs it
# again once workers are back. Quarantine rather than waiting on: an absent fleet
# is an outage a person must see, and requeueing behind it would only hide it.
STAGE_QUEUE_BOUND = timedelta(minutes=30)
VALIDATE_QUEUE_BOUND = timedelta(minutes=30)
OCR_QUEUE_BOUND = timedelta(hours=2)
#: check and publish follow paid-for OCR, and conclude records an outcome: they
#: wait for a worker however long it takes rather than throw that work away.
CHECK_QUEUE_BOUND: timedelta | None = None
PUBLISH_QUEUE_BOUND: timedelta | None = None


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
#: Delivery's own policy comes from the release's input (its settings, pinned at start).
RELEASE_STORE_TIMEOUT = timedelta(minutes=2)
RELEASE_RENDER_TIMEOUT = timedelta(minutes=20)
RELEASE_DELIVER_TIMEOUT = timedelta(minutes=5)
RELEASE_HEARTBEAT = timedelta(seconds=15)
