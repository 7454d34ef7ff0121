"""One canonical log line and the pipeline metrics per activity attempt (workflow ID, SHA-256)."""

from __future__ import annotations

import time
from typing import Any

import structlog
from temporalio import activity
from temporalio.client import Client
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from workers import metrics

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
