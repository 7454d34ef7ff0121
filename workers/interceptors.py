"""Activity interceptors: a canonical log line and metrics per attempt; the retry
budget; heartbeats for I/O steps."""

from __future__ import annotations

import contextvars
import inspect
import threading
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import structlog
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from activities.faults import failure
from custody.errors import Code
from workers import metrics
from workers.budget import BUDGETED, RetryBudget

log = structlog.get_logger("custody.activity")


class CanonicalLogInterceptor(Interceptor):
    """``client``, when given, lets metrics look up a workflow's start time."""

    def __init__(self, client: Client | None = None) -> None:
        self._client = client

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityLog(next, self._client)


class _ActivityLog(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, client: Client | None) -> None:
        super().__init__(next)
        self._client = client

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        sha256 = getattr(input.args[0], "sha256", None) if input.args else None
        fields = {
            "activity": info.activity_type,
            "workflow_id": info.workflow_id,
            "sha256": sha256,
            "attempt": info.attempt,
        }
        started = time.monotonic()
        arg = input.args[0] if input.args else None
        outcome, code, retryable, result = "ok", None, False, None
        metrics.activity_started(self._client)
        metrics.queue_wait()
        try:
            result = await self.next.execute_activity(input)
            return result
        except BaseException as err:
            code, retryable = metrics.classify(err)
            outcome = "failed"
            raise
        finally:
            ms = round((time.monotonic() - started) * 1000, 1)
            log.info("activity", **fields, outcome=outcome, code=code, ms=ms)
            metrics.activity_done(arg, result, code, retryable)


class OverloadInterceptor(Interceptor):
    """Spends the process's retry budget on each retry and refuses one when it is spent;
    retries a CIRCUIT_OPEN attempt after the breaker's pause, not the policy's first backoff.

    Inside the canonical log, so a refused retry is logged and counted with its code.
    """

    def __init__(
        self, budget: RetryBudget, overload: metrics.Overload, breaker_open_s: float = 30.0
    ) -> None:
        self.budget, self.overload = budget, overload
        self.open_pause = timedelta(seconds=breaker_open_s)

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Overload(next, self)


class _Overload(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, outer: OverloadInterceptor) -> None:
        super().__init__(next)
        self._outer = outer

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info, outer = activity.info(), self._outer
        if info.attempt > 1 and info.activity_type in BUDGETED:
            granted = outer.budget.take()
            outer.overload.budget(outer.budget.remaining, None if granted else info.activity_type)
            if not granted:
                raise failure(Code.RETRY_BUDGET_EXHAUSTED, "retry budget spent: failed fast")
        try:
            return await self.next.execute_activity(input)
        except ApplicationError as err:
            if err.type != Code.CIRCUIT_OPEN or err.next_retry_delay is not None:
                raise
            # Trying again before the breaker half-opens would only be refused again.
            raise ApplicationError(
                err.message,
                *err.details,
                type=err.type,
                non_retryable=err.non_retryable,
                next_retry_delay=outer.open_pause,
            ) from None


class HeartbeatKeeper(Interceptor):
    """Heartbeats on behalf of short I/O activities that have a heartbeat timeout.

    stage, validate and check take seconds. Their heartbeat timeout
    (``workflows.retries.IO_HEARTBEAT``) exists for an attempt lost on its way
    to a worker (the server restarted just as it dispatched it): that attempt
    is retried after the heartbeat timeout instead of at the end of its
    minutes-long start-to-close. While the attempt runs here, this keeps it
    alive; if the worker dies, so do the heartbeats. I/O worker only: OCR's
    page keeper must fall silent when a page hangs (``activities.ocr``).

    ``deadlines`` (activity type -> seconds): past it the keeper falls silent
    too, so an attempt that outlived its wall-clock bound (a delivery to a
    recipient that trickles bytes) is abandoned by the server at its heartbeat
    timeout instead of being kept alive for its whole start-to-close.
    """

    def __init__(self, deadlines: Mapping[str, float] | None = None) -> None:
        self.deadlines = dict(deadlines or {})

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Keeper(next, self.deadlines)


class _Keeper(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, deadlines: dict[str, float]) -> None:
        super().__init__(next)
        self._deadlines = deadlines

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        timeout = info.heartbeat_timeout
        if not timeout or inspect.iscoroutinefunction(input.fn):
            return await self.next.execute_activity(input)
        # A threaded activity's heartbeat waits on this event loop, so it is sent
        # from a thread of its own, in a copy of this attempt's context.
        stop = threading.Event()
        every_s = timeout.total_seconds() / 3
        until = time.monotonic() + self._deadlines.get(info.activity_type, float("inf"))
        context = contextvars.copy_context()
        keeper = threading.Thread(
            target=context.run,
            args=(_beat, stop, every_s, until),
            name="io-heartbeat",
            daemon=True,
        )
        keeper.start()
        try:
            return await self.next.execute_activity(input)
        finally:
            stop.set()


def _beat(stop: threading.Event, every_s: float, until: float = float("inf")) -> None:
    while not stop.wait(every_s) and time.monotonic() < until:
        try:
            activity.heartbeat()
        except Exception:
            return  # the attempt is over (completed or cancelled): nothing left to keep
