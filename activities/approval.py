"""A second person's approval of a held release (two-person rule), checked and then kept.

``accept`` runs inside the release workflow's ``approve`` update handler,
before the release goes on: the decision must be a ``release_approval`` for
this release and tenant, by someone other than the requester, signed by a
registered identity with the ``releaser`` role, valid when signed and now
(``custody.operators.check_decision``). Any refusal is final for that
approval (``SAME_APPROVER``, ``OPERATOR_REVOKED``, ``DECISION_INVALID`` ...): the
update fails and the release waits on, unchanged. An accepted decision is
stored create-only and named by one ``release.approved`` ledger event (actor:
the approver), appended once however often the step runs.
"""

from __future__ import annotations

from temporalio import activity

from activities.decisions import decider, parse, refused
from activities.faults import coded
from custody.canonical import canonical_json
from custody.errors import Code
from custody.operators import DecisionKind, SignedDecision
from custody.operators.journal import decision_key
from custody.release_approval import APPROVED_EVENT, ApprovalInput, Approved
from custody.state.egress import append_once
from custody.stores import ObjectStore


class ApprovalActivities:
    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @activity.defn(name="custody.release.approve")
    @coded(Code.STORE_UNAVAILABLE)
    def accept(self, inp: ApprovalInput) -> Approved:
        decision = _decision(inp)
        identity = decider(self._store, decision)  # a refusal: final, the release stays held
        key = decision_key(inp.tenant, f"releases/{inp.release_id}", decision)
        self._store.create(key, canonical_json(decision))  # the same bytes on a retry
        info = activity.info()
        event = append_once(
            self._store,
            inp.tenant,
            APPROVED_EVENT,
            once=key,
            actor=identity.name,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            detail={
                "release_id": inp.release_id,
                "requested_by": inp.requested_by,
                "decision": key,
                "decision_sha256": decision.sha256(),
            },
        )
        return Approved(
            approved_by=identity.name,
            decision_sha256=decision.sha256(),
            decision_key=key,
            event_seq=event.seq,
            attempt=info.attempt,
        )


def _decision(inp: ApprovalInput) -> SignedDecision:
    """The signed decision, if it is an approval of this release by someone else."""
    decision = parse(inp.approval.decision)
    s = decision.subject
    if (
        decision.kind is not DecisionKind.RELEASE_APPROVAL
        or s.get("release_id") != inp.release_id
        or s.get("tenant") != inp.tenant
        or decision.by != inp.approval.by
    ):
        raise refused(Code.DECISION_INVALID, "not an approval of this release")
    if decision.by == inp.requested_by:
        raise refused(Code.SAME_APPROVER, "the requester cannot approve their own release")
    return decision
