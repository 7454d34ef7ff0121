"""How many documents a tenant has in flight: the input to its fairness weight.

``submit`` asks once per new document (a deduplicated one starts nothing) and
sets ``DocumentInput.fairness_weight`` from the answer
(:func:`custody.queues.backlog_weight`). The count comes from Temporal
visibility, like admission's: every submitter, SDK or edge, in any process,
sees the same running workflows without a shared counter, and one
``CountWorkflowExecutions`` call costs the same whatever the backlog's depth.
Visibility lags its writes by milliseconds, so a burst's last few documents may
be counted a little low: the weight falls a few documents late, never wrongly.
"""

from __future__ import annotations

from temporalio.service import RPCError

from custody.queues import SA_TENANT, WORKFLOW_NAME, backlog_weight
from starter.client.connect import CustodyClient


async def in_flight(client: CustodyClient, tenant: str | None) -> int:
    """Running documents of ``tenant`` on this deployment's I/O queue."""
    # Tenant names are checked ([a-z0-9_-], custody.ids) before this: safe to quote.
    query = (
        f"WorkflowType = '{WORKFLOW_NAME}' AND ExecutionStatus = 'Running' "
        f"AND TaskQueue = '{client.settings.io_task_queue}' "
        f"AND {SA_TENANT} = '{tenant or ''}'"
    )
    return (await client.temporal.count_workflows(query)).count


async def fairness_weight(client: CustodyClient, tenant: str | None) -> float | None:
    """The weight for a new document of ``tenant``; None (the default) if unknown.

    A visibility store that cannot count must not stop intake: the document
    then takes the default weight, as it would with fairness off.
    """
    try:
        return backlog_weight(await in_flight(client, tenant))
    except RPCError:
        return None
