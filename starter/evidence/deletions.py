"""The two-person rule for evidence deletions: a pending signed request, then a second person.

Under a tenant policy whose ``two_person`` is on (``custody.state.tenant_policy``),
no evidence of the tenant goes on one person's word. Deletions are no workflows
(``custody retention apply`` and ``custody keys shred`` run in the CLI's own
process, and a retention deletion may fall due years after it was decided), so
the wait is state, not a Workflow Update: the first identity's command files a
**request** naming what would go, with its own signed decision, and deletes
nothing; ``custody deletions approve REQUEST_ID`` by a second, different identity
(role ``admin``) signs an ``evidence_deletion`` decision naming the request and
its hash. Only then does the deletion happen: a shred at once, a retention
deletion at ``apply`` once its period has run out.

    deletions/_/<request_id>/request.json    the request (create-only)
    deletions/_/<request_id>/approval.json   the second person's approval (create-only)

Kept in the no-tenant scope, so a shredded tenant's requests stay readable. The
approval is created once: of two approvers at once one wins, the other gets
``ALREADY_DECIDED``; the requester approving is ``SAME_APPROVER``; an unknown
request ``APPROVAL_NOT_PENDING``. Each is also a ledger event naming the person.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel

from custody.canonical import canonical_json
from custody.errors import Code, IdentityRefused
from custody.ledger.events import Ledger
from custody.operators import Acting, DecisionKind, SignedDecision, check_decision
from custody.stores import ObjectStore
from custody.stores.base import ObjectMissing

Action = Literal["retention", "shred"]
REQUESTED, APPROVED = "deletion.requested", "deletion.approved"
_BASE = "deletions/_/"


class DeletionRequest(BaseModel):
    """What would be deleted, and the first person's own signed decision to delete it."""

    request_id: str
    action: Action
    tenant: str | None
    #: retention: the document and the approval (``retention/...``) it makes effective.
    sha256: str | None = None
    approval: str | None = None
    requested_by: str
    requested_at: datetime
    decision: SignedDecision

    def sha256_of(self) -> str:
        return hashlib.sha256(canonical_json(self)).hexdigest()


class DeletionApproval(BaseModel):
    request_id: str
    request_sha256: str
    approved_by: str
    decision: SignedDecision


def request_id(action: Action, tenant: str | None, what: str) -> str:
    """The id a request is filed under: one per retention approval, one per shred decision."""
    return hashlib.sha256(f"{action}\0{tenant or ''}\0{what}".encode()).hexdigest()[:16]


def _key(rid: str, name: str) -> str:
    if len(rid) != 16 or any(c not in "0123456789abcdef" for c in rid):
        raise IdentityRefused(Code.APPROVAL_NOT_PENDING, "not a deletion request id")
    return f"{_BASE}{rid}/{name}.json"


def propose(store: ObjectStore, request: DeletionRequest) -> DeletionRequest:
    """File ``request`` (the same id again keeps the first); nothing is deleted."""
    store.create(_key(request.request_id, "request"), canonical_json(request))
    kept = load(store, request.request_id)
    if kept.sha256_of() == request.sha256_of():
        _ledger(store, request).append(
            REQUESTED, sha256=request.sha256, actor=request.requested_by,
            detail={"request_id": request.request_id, "action": request.action,
                    "request_sha256": kept.sha256_of()},
        )  # fmt: skip
    return kept


def _ledger(store: ObjectStore, request: DeletionRequest) -> Ledger:
    """The tenant's ledger; a shred's goes in the no-tenant one, which outlives the KEK."""
    return Ledger(store, None if request.action == "shred" else request.tenant)


def load(store: ObjectStore, rid: str) -> DeletionRequest:
    """Request ``rid``, once its decision is seen to decide exactly what it asks."""
    try:
        request = DeletionRequest.model_validate_json(store.get(_key(rid, "request")))
    except ObjectMissing:
        raise IdentityRefused(Code.APPROVAL_NOT_PENDING, f"no deletion request {rid}") from None
    d, s = request.decision, request.decision.subject
    kind = DecisionKind.KEY_SHRED if request.action == "shred" else DecisionKind.RETENTION_APPROVE
    same = s.get("tenant") == request.tenant and s.get("sha256") == request.sha256
    if d.kind is not kind or d.by != request.requested_by or not same or request.request_id != rid:
        raise IdentityRefused(Code.DECISION_INVALID, f"deletion request {rid} does not hold")
    return request


def approval(store: ObjectStore, rid: str) -> DeletionApproval | None:
    try:
        return DeletionApproval.model_validate_json(store.get(_key(rid, "approval")))
    except ObjectMissing:
        return None


def approve(
    store: ObjectStore, person: Acting, rid: str
) -> tuple[DeletionRequest, DeletionApproval]:
    """The second person's signed approval of request ``rid``, kept once; refusals coded."""
    request = load(store, rid)
    if person.name == request.requested_by:
        raise IdentityRefused(Code.SAME_APPROVER, "the requester cannot approve their own deletion")
    check_decision(store, request.decision, now=datetime.now(UTC))  # the requester still stands
    subject = {"request_id": rid, "request_sha256": request.sha256_of(), "action": request.action,
               "tenant": request.tenant, "sha256": request.sha256}  # fmt: skip
    decision = person.decide(DecisionKind.EVIDENCE_DELETION, subject)
    body = DeletionApproval(
        request_id=rid, request_sha256=request.sha256_of(), approved_by=person.name,
        decision=decision,
    )  # fmt: skip
    if not store.create(_key(rid, "approval"), canonical_json(body)):
        raise IdentityRefused(Code.ALREADY_DECIDED, f"deletion request {rid} is approved already")
    _ledger(store, request).append(
        APPROVED, sha256=request.sha256, actor=person.name,
        detail={"request_id": rid, "requested_by": request.requested_by,
                "decision_sha256": decision.sha256()},
    )  # fmt: skip
    return request, body


def approved_by(store: ObjectStore, request: DeletionRequest) -> str | None:
    """Who approved ``request``, if someone other than the requester did with a valid,
    signed decision naming exactly it; else None (the deletion waits)."""
    found = approval(store, request.request_id)
    if found is None or found.request_sha256 != request.sha256_of():
        return None
    s = found.decision.subject
    if (
        found.decision.by in (request.requested_by, None)
        or s.get("request_id") != request.request_id
    ):
        return None
    if s.get("request_sha256") != request.sha256_of() or found.approved_by != found.decision.by:
        return None
    try:
        check_decision(store, found.decision)
        check_decision(store, request.decision)
    except IdentityRefused:
        return None
    return found.approved_by


def pending(store: ObjectStore, tenant: str | None, every: bool) -> list[dict[str, object]]:
    """The requests (of ``tenant``, or ``every`` tenant's), each with who approved it."""
    rows: list[dict[str, object]] = []
    for key in store.list(_BASE):
        if key.endswith("/request.json"):
            request = load(store, key[len(_BASE) :].split("/")[0])
            if every or request.tenant == tenant:
                row = request.model_dump(mode="json", exclude={"decision"})
                rows.append(row | {"approved_by": approved_by(store, request)})
    return sorted(rows, key=lambda r: str(r["requested_at"]))


def new_request(
    person: Acting, action: Action, tenant: str | None, decision: SignedDecision, **what: str
) -> DeletionRequest:
    """A request by ``person``, filed under the id its subject gives (:func:`request_id`)."""
    key = what.get("approval") or decision.sha256()
    return DeletionRequest(
        request_id=request_id(action, tenant, key), action=action, tenant=tenant,
        requested_by=person.name, requested_at=datetime.now(UTC), decision=decision, **what,
    )  # fmt: skip
