"""Reviews as callers see them: the queue, what a reviewer needs, and a decision.

``waiting`` lists the documents in review (visibility: running ``DocumentReview``
runs, by tenant) with what each waits for. ``show`` hands a reviewer the page
images and the fields read (an egress event of kind ``review`` first, like
every read). ``resolve`` delivers a decision as the Workflow Update ``decide``:
the corrections and the note sealed in the store first (only their reference
and hash travel), the decision signed by the reviewer's own key. Its answer is
the document's new state and who reviewed it; a refusal is a coded
``ReviewRefused``: ``NOT_IN_REVIEW``, ``ALREADY_DECIDED``, or the identity's
code (``OPERATOR_REVOKED`` ...), with the document left as it was.
"""

from __future__ import annotations

import hashlib
from typing import Any

from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.canonical import canonical_json
from custody.egress import EgressKind
from custody.errors import Code, ReviewRefused
from custody.operators import Acting, DecisionKind, SignedDecision
from custody.queues import SA_TENANT
from custody.refs import RefKeys
from custody.reviews import (
    DECIDE_UPDATE,
    REVIEW_QUERY,
    REVIEW_WORKFLOW_NAME,
    Answer,
    Decision,
    ReviewStatus,
    corrections_key,
    reject_code,
)
from custody.state.egress import hand_out
from starter.client.connect import CustodyClient, described
from starter.client.review_material import material

Lines = list[tuple[int, int, str]]


async def waiting(client: CustodyClient, tenant: str | None = None) -> list[ReviewStatus]:
    """Every document waiting in review (of ``tenant``, else of all), oldest first."""
    query = f"WorkflowType = '{REVIEW_WORKFLOW_NAME}' AND ExecutionStatus = 'Running'"
    if tenant is not None:
        query += f" AND {SA_TENANT} = '{ids.check_tenant(tenant)}'"
    found = []
    async for wf in client.temporal.list_workflows(query):
        handle = client.temporal.get_workflow_handle(wf.id, run_id=wf.run_id)
        try:
            found.append(await handle.query(REVIEW_QUERY, result_type=ReviewStatus))
        except RPCError:
            continue  # it ended between the listing and the query
    return sorted(found, key=lambda r: r.waiting_since)


async def status(client: CustodyClient, sha256: str, tenant: str | None) -> ReviewStatus:
    """The document's review, if it waits in one; else NOT_IN_REVIEW (or ALREADY_DECIDED)."""
    handle = client.handle(sha256, tenant)
    desc = await described(handle)
    if desc is None:
        raise ReviewRefused(Code.NOT_IN_REVIEW, f"{sha256[:12]} is not in review")
    if desc.workflow_type != REVIEW_WORKFLOW_NAME or desc.status != WorkflowExecutionStatus.RUNNING:
        raise _not_waiting(client, sha256, tenant)
    found: ReviewStatus = await handle.query(REVIEW_QUERY, result_type=ReviewStatus)
    return found


async def show(
    client: CustodyClient,
    sha256: str,
    tenant: str | None,
    *,
    actor: str,
    purpose: str | None = None,
) -> bytes:
    """What a reviewer needs, as JSON (fields with values and boxes, pages with text lines
    and images as base64): handed out once its egress event is in the ledger, with
    ``purpose`` (else the tenant policy's purpose of disclosure)."""
    review = await status(client, sha256, tenant)
    data = canonical_json(_material(client, review))
    return hand_out(
        client.store,
        tenant,
        EgressKind.REVIEW,
        data,
        actor=actor,
        documents=[sha256],
        purpose=purpose,
    )


def decision(
    acting: Acting,
    sha256: str,
    tenant: str | None,
    *,
    reject: str | None = None,
    fields: dict[str, str] | None = None,
    lines: Lines | None = None,
    note: str | None = None,
) -> tuple[SignedDecision, dict[str, Any] | None]:
    """The reviewer's signed decision and the corrections it names (None: none)."""
    corrections = corrections_of(fields or {}, lines or [], note)
    subject: dict[str, Any] = {
        "sha256": sha256,
        "tenant": tenant,
        "verdict": "reject" if reject else "approve",
        "reject_code": reject_code(reject).value if reject else None,
        "corrections_key": None,
    }
    if corrections is not None:
        raw = canonical_json(corrections)
        digest = hashlib.sha256(raw).hexdigest()
        subject |= {"corrections_key": corrections_key(sha256, tenant, digest)}
        subject |= {"corrections_sha256": digest}
        if note:
            subject["note_sha256"] = hashlib.sha256(note.encode()).hexdigest()
    return acting.decide(DecisionKind.REVIEW, subject), corrections


def corrections_of(fields: dict[str, str], lines: Lines, note: str | None) -> dict[str, Any] | None:
    """What a reviewer typed, as the sealed object holds it; None when nothing was."""
    if not fields and not lines and not note:
        return None
    listed = [{"page": p, "line": n, "text": t} for p, n, t in sorted(lines)]
    return {"fields": dict(sorted(fields.items())), "lines": listed, "note": note}


async def resolve(
    client: CustodyClient,
    signed: SignedDecision,
    corrections: dict[str, Any] | None,
) -> Answer:
    """Deliver ``signed`` (with its corrections, sealed first) to the document's review."""
    s = signed.subject
    sha256, tenant = str(s.get("sha256")), s.get("tenant")
    await status(client, sha256, tenant)  # in review now, or a coded refusal
    arg = _update(client, signed, corrections)
    handle = client.handle(sha256, tenant)
    try:
        answer: Answer = await handle.execute_update(DECIDE_UPDATE, arg, result_type=Answer)
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type in Code.__members__:
            raise ReviewRefused(cause.type, cause.message) from None
        raise ReviewRefused(Code.INTERNAL, "the decision failed") from None
    except RPCError as err:  # it ended meanwhile: another reviewer's decision took effect
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        raise _not_waiting(client, sha256, tenant) from None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise ReviewRefused(Code.IO_TIMEOUT, "no worker took the decision; ask again") from None
    return answer


def _update(
    client: CustodyClient, signed: SignedDecision, corrections: dict[str, Any] | None
) -> Decision:
    """The update's argument: the corrections sealed in the store, their reference signed."""
    s = signed.subject
    sha256, tenant, key = str(s["sha256"]), s.get("tenant"), s.get("corrections_key")
    if (corrections is None) != (key is None):
        raise ReviewRefused(Code.DECISION_INVALID, "corrections and decision disagree")
    sig = None
    if corrections is not None and key is not None:
        raw = canonical_json(corrections)
        if hashlib.sha256(raw).hexdigest() != s.get("corrections_sha256"):
            raise ReviewRefused(Code.DECISION_INVALID, "the corrections are not the ones signed")
        client.store.create(key, raw)  # sealed like document content; same bytes if there
        sig = RefKeys.for_store(client.store).sign(key, tenant, sha256)
    fields = sorted((corrections or {}).get("fields", {}))
    lines = [(int(x["page"]), int(x["line"])) for x in (corrections or {}).get("lines", [])]
    return Decision(
        decision=signed.model_dump_json(),
        verdict=s["verdict"],
        reject_code=s.get("reject_code"),
        corrections_key=key,
        corrections_sig=sig,
        fields=fields,
        lines=sorted(lines),
    )


def _not_waiting(client: CustodyClient, sha256: str, tenant: str | None) -> ReviewRefused:
    """ALREADY_DECIDED when a review of the document was decided; else NOT_IN_REVIEW."""
    decided = any(client.store.list(f"results/{ids.scope(tenant)}/{sha256}/review-"))
    if decided:
        return ReviewRefused(Code.ALREADY_DECIDED, f"the review of {sha256[:12]} was decided")
    return ReviewRefused(Code.NOT_IN_REVIEW, f"{sha256[:12]} is not in review")


def _material(client: CustodyClient, review: ReviewStatus) -> dict[str, Any]:
    """Fields (value, confidence, page, box) and pages (size, lines, image) for a reviewer."""
    return material(client.store, review)
