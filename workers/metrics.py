"""The workers' Prometheus endpoint: Custody's pipeline metrics beside the SDK's own.

Both come out of one endpoint per worker process: the Temporal runtime's
Prometheus exporter (``CUSTODY_IO_METRICS_PORT``, ``CUSTODY_OCR_METRICS_PORT``;
off when unset), and Custody's metrics are recorded on the runtime's own
meter, so there is no second server. Metric attributes are activity names,
states and error codes only: never a tenant, a file name or document content.

    custody_ocr_seconds_per_page           histogram   OCR worker
    custody_admission_to_start_seconds     histogram   accepted -> first OCR attempt started
    custody_activity_retries_total         counter     {activity, code}: failed attempts retried
    custody_documents_terminal_total       counter     {state, code}
    custody_validated_to_published_seconds histogram   I/O worker
    custody_accepted_to_published_seconds  histogram   I/O worker
    custody_task_queue_wait_seconds        histogram   {activity, priority}: an attempt's
                                                       time in its task queue (queue age)
    custody_retry_budget_remaining         gauge       retries left this minute (workers.budget)
    custody_retry_budget_exhausted_total   counter     {activity}: retries refused, failed fast
    custody_breaker_state                  gauge       {breaker}: 0 closed, 1 half-open, 2 open
    custody_breaker_opened_total           counter     {breaker}: times a breaker opened
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.common import MetricMeter
from temporalio.exceptions import ApplicationError
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from custody.models import ConcludeInput, DocState, OcrResult, PublishInput
from custody.settings import Settings
from workers.breaker import State

_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200]
HISTOGRAMS: dict[str, list[float]] = {
    "custody_ocr_seconds_per_page": _SECONDS,
    "custody_admission_to_start_seconds": _SECONDS,
    "custody_validated_to_published_seconds": _SECONDS,
    "custody_accepted_to_published_seconds": _SECONDS,
    "custody_task_queue_wait_seconds": _SECONDS,
}
_OCR_ACTIVITY = "custody.ocr"
# Background look-ups (admission-to-start) are kept here until done: a task
# with no reference may be collected before it runs.
_pending: set[asyncio.Task[None]] = set()


def runtime_for(settings: Settings, port: int | None) -> Runtime | None:
    """A runtime exporting metrics on ``port``, or None for the SDK's default (off)."""
    if port is None:
        return None
    prometheus = PrometheusConfig(
        bind_address=f"{settings.metrics_host}:{port}",
        counters_total_suffix=True,
        durations_as_seconds=True,
        histogram_bucket_overrides=HISTOGRAMS,
    )
    return Runtime(telemetry=TelemetryConfig(metrics=prometheus))


def activity_started(client: Client | None) -> None:
    """At an attempt's start: the first OCR attempt closes admission-to-start.

    The workflow's start time comes from ``client`` (sync activities have no
    ``activity.client()``), off the activity's path: one describe per document.
    """
    info = activity.info()
    if client and info.activity_type == _OCR_ACTIVITY and info.attempt == 1 and info.workflow_id:
        started = _admission_to_start(client, info.workflow_id, info.started_time)
        task = asyncio.create_task(started)
        _pending.add(task)
        task.add_done_callback(_pending.discard)


def queue_wait() -> None:
    """At an attempt's start: how long it waited in its task queue for a worker."""
    info = activity.info()
    waited = (info.started_time - info.current_attempt_scheduled_time).total_seconds()
    priority = str(info.priority.priority_key or 3)  # 0 or None: the default, 3
    activity.metric_meter().create_histogram_float(
        "custody_task_queue_wait_seconds", "Scheduled until started, per attempt", "s"
    ).record(max(0.0, waited), {"activity": info.activity_type, "priority": priority})


class Overload:
    """The retry budget's and the breakers' instruments, on the worker's runtime meter.

    Recorded outside activities too (a breaker changes state on any thread), so
    it holds the meter rather than asking ``activity.metric_meter()``.
    """

    def __init__(self, meter: MetricMeter) -> None:
        self._remaining = meter.create_gauge_float(
            "custody_retry_budget_remaining", "Retries this worker may still start now"
        )
        self._exhausted = meter.create_counter(
            "custody_retry_budget_exhausted", "Retries refused by the retry budget"
        )
        self._state = meter.create_gauge(
            "custody_breaker_state", "Circuit breaker: 0 closed, 1 half-open, 2 open"
        )
        self._opened = meter.create_counter("custody_breaker_opened", "Times a breaker opened")

    @classmethod
    def for_client(cls, client: Client) -> Overload:
        runtime = client.service_client.config.runtime or Runtime.default()
        return cls(runtime.metric_meter)

    def budget(self, remaining: float, refused: str | None = None) -> None:
        self._remaining.set(remaining)
        if refused is not None:
            self._exhausted.add(1, {"activity": refused})

    def breaker(self, name: str, state: State) -> None:
        self._state.set(int(state), {"breaker": name})
        if state is State.OPEN:
            self._opened.add(1, {"breaker": name})


def activity_done(arg: Any, result: Any, code: str | None, retryable: bool) -> None:
    """At an attempt's end: retries, terminal states, OCR pace, publication lag."""
    meter = activity.metric_meter()
    if code is not None:
        if retryable:
            meter.create_counter(
                "custody_activity_retries", "Failed activity attempts that will be retried"
            ).add(1, {"activity": activity.info().activity_type, "code": code})
        return
    if isinstance(result, OcrResult) and result.pages:
        hist = meter.create_histogram_float(
            "custody_ocr_seconds_per_page", "OCR seconds per page", "s"
        )
        for _ in range(result.pages):
            hist.record(result.seconds / result.pages)
    if isinstance(arg, PublishInput):
        _terminal(DocState.PUBLISHED.value, "")
        _since(arg, DocState.VALIDATED, "custody_validated_to_published_seconds")
        _since(arg, DocState.ACCEPTED, "custody_accepted_to_published_seconds")
    elif isinstance(arg, ConcludeInput):
        _terminal(arg.state.value, arg.code)


def classify(err: BaseException) -> tuple[str, bool]:
    """An attempt's error as (code, retryable), the same way the workflow's retry policy sees it."""
    info = activity.info()
    policy = info.retry_policy
    last = policy is not None and 0 < policy.maximum_attempts <= info.attempt
    if isinstance(err, ApplicationError):
        code = err.type or "ApplicationError"
        never = policy is not None and code in (policy.non_retryable_error_types or ())
        return code, not (err.non_retryable or never or last)
    return type(err).__name__, not last


def _terminal(state: str, code: str) -> None:
    activity.metric_meter().create_counter(
        "custody_documents_terminal", "Documents by terminal state and code"
    ).add(1, {"state": state, "code": code})


def _since(arg: PublishInput, state: DocState, name: str) -> None:
    at = next((t.at for t in arg.transitions if t.state == state), None)
    if at is not None:
        seconds = (datetime.now(UTC) - at).total_seconds()
        activity.metric_meter().create_histogram_float(name, name, "s").record(max(0.0, seconds))


async def _admission_to_start(client: Client, workflow_id: str, started: datetime) -> None:
    meter = activity.metric_meter()
    try:
        desc = await client.get_workflow_handle(workflow_id).describe()
    except Exception:  # a metric is not worth failing or slowing OCR for
        return
    seconds = (started - desc.start_time).total_seconds()
    meter.create_histogram_float(
        "custody_admission_to_start_seconds", "Accepted until the first OCR attempt started", "s"
    ).record(max(0.0, seconds))
