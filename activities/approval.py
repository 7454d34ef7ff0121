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

from datetime import UTC, datetime

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.faults import coded
from custody.canonical import canonical_json
from custody.errors import Code, IdentityRefused
from custody.operators import DecisionKind, SignedDecision, check_decision
from custody.operators.journal import decision_key
from custody.release_approval import APPROVED_EVENT, ApprovalInput, Approved
from custody.state.egress import append_once
from custody.stores import ObjectStore


def _refused(code: Code | str, message: str) -> ApplicationError:
    """An approval that cannot take effect: final, the release stays held."""
    return ApplicationError(message, type=str(code), non_retryable=True)


class ApprovalActivities:
    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @activity.defn(name="custody.release.approve")
    @coded(Code.STORE_UNAVAILABLE)
    def accept(self, inp: ApprovalInput) -> Approved:
        decision = _decision(inp)
        try:
            identity = check_decision(self._store, decision, now=datetime.now(UTC))
        except IdentityRefused as err:
            raise _refused(err.code, err.detail) from None
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
    try:
        decision = SignedDecision.model_validate_json(inp.approval.decision)
    except ValueError:
        raise _refused(Code.DECISION_INVALID, "not a signed decision") from None
    s = decision.subject
    if (
        decision.kind is not DecisionKind.RELEASE_APPROVAL
        or s.get("release_id") != inp.release_id
        or s.get("tenant") != inp.tenant
        or decision.by != inp.approval.by
    ):
        raise _refused(Code.DECISION_INVALID, "not an approval of this release")
    if decision.by == inp.requested_by:
        raise _refused(Code.SAME_APPROVER, "the requester cannot approve their own release")
    return decision
