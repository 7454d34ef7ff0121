"""The I/O worker heartbeats for its short activities, so their heartbeat timeout only
catches attempts that never reached (or lost) a worker."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from uuid import uuid4

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutError, TimeoutType
from temporalio.worker import Interceptor, Worker

from workers.interceptors import HeartbeatKeeper


# A stand-in for stage/validate/check: it runs past its heartbeat timeout and never
# heartbeats itself; the interceptor under test is the real one.
@activity.defn(name="quiet")
def quiet(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


@workflow.defn(name="QuietStep", sandboxed=False)
class QuietStep:
    @workflow.run
    async def run(self, seconds: float) -> str:
        return str(
            await workflow.execute_activity(
                quiet,
                seconds,
                start_to_close_timeout=timedelta(seconds=60),
                heartbeat_timeout=timedelta(seconds=1),
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
        )


async def _run(client: Client, interceptors: list[Interceptor], seconds: float = 3.0) -> str:
    queue = f"keeper-{uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[QuietStep],
        activities=[quiet],
        activity_executor=ThreadPoolExecutor(2),
        interceptors=interceptors,
    ):
        return str(
            await client.execute_workflow(
                QuietStep.run, seconds, id=f"keeper-{uuid4().hex}", task_queue=queue
            )
        )


async def test_heartbeat_keeper_keeps_a_running_io_step_alive(temporal_client: Client) -> None:
    """A 3 s step with a 1 s heartbeat timeout finishes when the keeper beats for it."""
    assert await _run(temporal_client, [HeartbeatKeeper()]) == "done"


async def test_heartbeat_keeper_absent_the_step_times_out(temporal_client: Client) -> None:
    """Without the keeper the same step fails on its heartbeat timeout: the test can fail."""
    with pytest.raises(WorkflowFailureError) as failed:
        await _run(temporal_client, [])
    cause = failed.value.cause
    assert isinstance(cause, ActivityError) and isinstance(cause.cause, TimeoutError)
    assert cause.cause.type == TimeoutType.HEARTBEAT


async def test_heartbeat_keeper_falls_silent_past_a_steps_deadline(temporal_client: Client) -> None:
    """Given a 1 s deadline for the step (as delivery gets its push deadline), the keeper
    stops beating and the step is abandoned on its heartbeat timeout. The step runs 8 s,
    not 3: on a loaded box the server's timer fired after a 3 s step had finished (the
    timeout is due at 2 s; how late the server checks it is the box's, not the keeper's)."""
    with pytest.raises(WorkflowFailureError) as failed:
        await _run(temporal_client, [HeartbeatKeeper({"quiet": 1.0})], seconds=8.0)
    cause = failed.value.cause
    assert isinstance(cause, ActivityError) and isinstance(cause.cause, TimeoutError)
    assert cause.cause.type == TimeoutType.HEARTBEAT
