"""Release published documents to a registered recipient, and read egress back.

    rel = await release(custody, [sha], to="clinic-b", tenant="clinic-a", actor="ops:alice")
    result = await wait_release(custody, rel.release_id)

The policy is pinned by hash when the release starts: a policy changed while
it runs does not change what it sends. The workflow ID derives from (tenant,
recipient, policy hash, sorted documents), so ten identical requests at once
start one workflow and the recipient receives one packet.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

from temporalio.client import WorkflowExecutionStatus
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from custody import egress as eg
from custody import ids
from custody.errors import Code, EgressRefused
from custody.queues import SA_REASON, SA_STATE, SA_TENANT
from custody.state.egress import current_policy, get_recipient
from starter.client.connect import CustodyClient


async def release(
    client: CustodyClient,
    documents: list[str],
    *,
    to: str,
    policy: str = "default",
    tenant: str | None = None,
    actor: str,
) -> eg.ReleaseResult:
    """Start (or join) the release; returns at once with state ``running``.

    Refuses at once, starting nothing, when the recipient or policy is unknown.
    Whether each document may leave is decided inside the workflow, from the
    store, so a refusal there is recorded like any outcome.
    """
    ids.check_tenant(tenant)
    docs = sorted({ids.check_sha256(d) for d in documents})
    if not docs:
        raise EgressRefused(Code.RELEASE_INVALID, "a release needs at least one document")
    get_recipient(client.store, tenant, to)
    pinned = current_policy(client.store, tenant, policy)
    rid = eg.release_id(tenant, to, pinned.sha256(), docs)
    s = client.settings
    inp = eg.ReleaseInput(
        release_id=rid,
        tenant=tenant,
        recipient=to,
        policy_sha256=pinned.sha256(),
        documents=docs,
        actor=actor,
        requested_at=datetime.now(UTC),
        delivery=eg.DeliveryTuning(
            max_attempts=s.egress_delivery_attempts,
            initial_interval_s=s.egress_delivery_interval_s,
            maximum_interval_s=s.egress_delivery_max_interval_s,
        ),
    )
    # An earlier request's run is this release: joining it is the point.
    with contextlib.suppress(WorkflowAlreadyStartedError):
        await client.temporal.start_workflow(
            eg.RELEASE_WORKFLOW_NAME,
            inp,
            id=eg.release_workflow_id(rid),
            task_queue=s.io_task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=_search_attributes(inp),
            static_summary=f"release {rid[:12]} of {len(docs)} document(s)",
        )
    handle = client.temporal.get_workflow_handle(
        eg.release_workflow_id(rid), result_type=eg.ReleaseResult
    )
    if (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED:
        done: eg.ReleaseResult = await handle.result()  # asked again after it ended
        return done
    return eg.ReleaseResult(
        release_id=rid,
        state=eg.ReleaseState.RUNNING,
        tenant=tenant,
        recipient=to,
        policy=pinned.name,
        policy_sha256=pinned.sha256(),
        documents=docs,
        workflow_id=eg.release_workflow_id(rid),
    )


async def wait_release(client: CustodyClient, release_id: str) -> eg.ReleaseResult:
    """Block until the release ends: delivered, refused or failed."""
    handle = client.temporal.get_workflow_handle(
        eg.release_workflow_id(eg.check_release_id(release_id)), result_type=eg.ReleaseResult
    )
    result: eg.ReleaseResult = await handle.result()
    return result


def _search_attributes(inp: eg.ReleaseInput) -> TypedSearchAttributes:
    pairs: list[SearchAttributePair[str]] = [
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_STATE), eg.ReleaseState.RUNNING),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_REASON), ""),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_TENANT), inp.tenant or ""),
        SearchAttributePair(SearchAttributeKey.for_keyword(eg.SA_RECIPIENT), inp.recipient),
    ]
    return TypedSearchAttributes(pairs)
