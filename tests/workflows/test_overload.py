"""Overload past admission: a step no worker takes, and retries past the worker's budget.

The real workflow, retry policies and dev server; the activities are stand-ins
(tests/workflows/stand_ins.py) so each outcome comes in seconds.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from uuid import uuid4

import pytest
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from custody.errors import Code
from custody.models import DocState
from custody.queues import PRIORITY_RESERVED
from tests.workflows.stand_ins import Quick, Script, StandIns, start_document
from tests.workflows.test_replay import replay_and_keep
from workers.budget import RetryBudget
from workers.interceptors import OverloadInterceptor
from workers.metrics import Overload
from workers.versioning import WORKFLOWS
from workflows import retries as r


async def test_step_unclaimed_past_queue_bound_quarantines_queue_stalled(
    temporal_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OCR queued where no worker polls ends QUEUE_STALLED at its bound, and the outcome is
    recorded; the run (a reserved-lane document) is kept as the ``stalled`` history."""
    monkeypatch.setattr(r, "OCR", dataclasses.replace(r.OCR, queue_bound=timedelta(seconds=2)))
    stand_ins, queue = StandIns(), f"stall-{uuid4().hex[:10]}"
    script = Script()
    async with Worker(
        temporal_client,
        task_queue=queue,
        workflows=WORKFLOWS,
        activities=stand_ins.activities(),
        # The sandbox imports its own copy of workflows.retries: unsandboxed, the
        # shortened bound applies. The replay below runs sandboxed.
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        handle = await start_document(
            temporal_client,
            stand_ins,
            queue,
            script,
            ocr_queue=f"nobody-{uuid4().hex[:10]}",
            priority=PRIORITY_RESERVED,
        )
        result = await handle.result()
    assert result.state is DocState.QUARANTINED
    assert result.code == Code.QUEUE_STALLED
    assert script.attempts("ocr") == 0 and script.attempts("conclude") == 1
    assert script.inputs["conclude"].code == Code.QUEUE_STALLED
    await replay_and_keep(temporal_client, handle.id, "stalled")


async def test_retries_past_worker_budget_fail_fast_and_quarantine(
    temporal_client: Client,
) -> None:
    """With one retry a minute, stage's second retry never reaches the step: the document
    is quarantined RETRY_BUDGET_EXHAUSTED at attempt 3 instead of retrying five times."""
    stand_ins, queue = StandIns(), f"budget-{uuid4().hex[:10]}"
    budget = RetryBudget(1)
    script = Script(faults={"stage": [Quick(Code.STORE_UNAVAILABLE)]})
    async with Worker(
        temporal_client,
        task_queue=queue,
        workflows=WORKFLOWS,
        activities=stand_ins.activities(),
        interceptors=[OverloadInterceptor(budget, Overload.for_client(temporal_client))],
    ):
        handle = await start_document(temporal_client, stand_ins, queue, script)
        result = await handle.result()
    assert result.state is DocState.QUARANTINED
    assert result.code == Code.RETRY_BUDGET_EXHAUSTED
    assert script.attempts("stage") == 2  # the refused third attempt did no work
    assert result.attempts["stage"] == 3
    assert budget.remaining < 1.0
