"""Release published documents to a registered recipient, and read egress back.

    rel = await release(custody, [sha], to="clinic-b", tenant="clinic-a", actor="ops:alice")
    result = await wait_release(custody, rel.release_id)
    answer = await approve(custody, acting_as_bob, rel.release_id, tenant="clinic-a")

The policy is pinned by hash when the release starts: a policy changed while
it runs does not change what it sends. The workflow ID derives from (tenant,
recipient, policy hash, sorted documents), so ten identical requests at once
start one workflow and the recipient receives one packet.

Under a two-person policy (``custody.release_approval``) the release waits,
``awaiting_approval``, until :func:`approve` delivers a second identity's
signed approval as the Workflow Update ``approve``; a refusal is a coded
``IdentityRefused`` (``SAME_APPROVER``, ``ALREADY_DECIDED``,
``APPROVAL_NOT_PENDING``, the identity's own code), the release left held.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from custody import egress as eg
from custody import ids
from custody.errors import Code, EgressRefused, IdentityRefused
from custody.operators import Acting, DecisionKind
from custody.queues import SA_REASON, SA_STATE, SA_TENANT
from custody.release_approval import APPROVE_UPDATE, Approval, ApprovalAnswer, subject
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
    purpose: str | None = None,
    approval_s: float = eg.APPROVAL_S,
) -> eg.ReleaseResult:
    """Start (or join) the release; returns at once with state ``running``.

    ``actor`` is the requester (under a two-person policy, who may not approve it);
    ``purpose`` the purpose of disclosure recorded with its egress event (None:
    the policy's); ``approval_s`` how long it waits for a second person, if held.
    Refuses at once, starting nothing, when the recipient or policy is unknown.
    Whether each document may leave is decided inside the workflow, from the
    store, so a refusal there is recorded like any outcome.
    """
    ids.check_tenant(tenant)
    if purpose is not None:
        try:
            purpose = eg.check_purpose(purpose)
        except ValueError as err:
            raise EgressRefused(Code.RELEASE_INVALID, str(err)) from None
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
        purpose=purpose,
        approval_s=approval_s,
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


async def approve(
    client: CustodyClient, person: Acting, release_id: str, tenant: str | None
) -> ApprovalAnswer:
    """``person``'s signed approval of a release held for a second person."""
    signed = person.decide(DecisionKind.RELEASE_APPROVAL, subject(release_id, tenant))
    arg = Approval(decision=signed.model_dump_json(), by=person.name, release_id=release_id)
    handle = client.temporal.get_workflow_handle(eg.release_workflow_id(release_id))
    try:
        answer: ApprovalAnswer = await handle.execute_update(
            APPROVE_UPDATE, arg, result_type=ApprovalAnswer
        )
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type in Code.__members__:
            raise IdentityRefused(cause.type, cause.message) from None
        raise IdentityRefused(Code.INTERNAL, "the approval failed") from None
    except RPCError as err:  # no such release, or it ended
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        raise IdentityRefused(Code.APPROVAL_NOT_PENDING, "the release waits for none") from None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise IdentityRefused(Code.IO_TIMEOUT, "no worker took the approval; ask again") from None
    return answer


def _search_attributes(inp: eg.ReleaseInput) -> TypedSearchAttributes:
    pairs: list[SearchAttributePair[str]] = [
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_STATE), eg.ReleaseState.RUNNING),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_REASON), ""),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_TENANT), inp.tenant or ""),
        SearchAttributePair(SearchAttributeKey.for_keyword(eg.SA_RECIPIENT), inp.recipient),
    ]
    return TypedSearchAttributes(pairs)
