"""One canonical log line per activity attempt, bound to workflow ID and SHA-256."""

from __future__ import annotations

import time
from typing import Any

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

log = structlog.get_logger("custody.activity")


class CanonicalLogInterceptor(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityLog(next)


class _ActivityLog(ActivityInboundInterceptor):
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
        outcome, code = "ok", None
        try:
            return await self.next.execute_activity(input)
        except ApplicationError as err:
            outcome, code = "failed", err.type
            raise
        except BaseException as err:
            outcome, code = "failed", type(err).__name__
            raise
        finally:
            ms = round((time.monotonic() - started) * 1000, 1)
            log.info("activity", **fields, outcome=outcome, code=code, ms=ms)
