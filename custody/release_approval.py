"""The two-person rule for releases: when a release waits, what an approval is, what it answers.

A policy's ``two_person`` (``custody.egress.Policy``) holds a release after
prepare, before anything is rendered, until a second identity approves it:
``always``, or ``flagged`` when some rule flagged a document it carries (fields
a person must review, or the review confidence band). The approval is the
Workflow Update ``approve`` on the release's workflow (``workflows.release``):
its validator refuses, without a trace in history, the requester approving
their own release (``SAME_APPROVER``), a second approval (``ALREADY_DECIDED``)
and a release that is not waiting (``APPROVAL_NOT_PENDING``); the approver's
signature, role (``releaser``) and standing now are checked by the step
``custody.release.approve`` (activities.approval), which keeps the signed
decision and a ``release.approved`` ledger event naming it. Nobody approving
within the release's ``approval_s`` ends it refused ``APPROVAL_EXPIRED``.

Light on purpose: the release workflow imports it through the sandbox.

    decisions/<tenant or _>/releases/<release_id>/<at>-release_approval-<sha[:16]>.json
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from custody import egress as eg

#: The update that delivers an approval; the ledger event that records one.
APPROVE_UPDATE = "approve"
APPROVED_EVENT = "release.approved"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def flagged(fields_review: list[str], confidence_band: str) -> bool:
    """Whether some rule flagged a published document: fields to review, or the review band."""
    return bool(fields_review) or confidence_band == "review"


def needs_approval(policy: eg.Policy, any_flagged: bool) -> bool:
    """Whether a release under ``policy`` waits for a second person."""
    return policy.two_person == "always" or (policy.two_person == "flagged" and any_flagged)


def subject(release_id: str, tenant: str | None) -> dict[str, str | None]:
    """What an approval's signed decision names: the release, and its tenant."""
    return {"release_id": eg.check_release_id(release_id), "tenant": tenant}


class Approval(_Model):
    """The update's argument: a signed ``release_approval`` decision (JSON) and whom it names.

    ``by`` and ``release_id`` repeat the decision's own, so the validator can refuse
    the requester without parsing a signature; the approve step checks they agree.
    """

    decision: str
    by: str
    release_id: str


class ApprovalInput(_Model):
    release_id: str
    tenant: str | None
    #: The identity (or account, or API key) that started the release.
    requested_by: str
    approval: Approval


class Approved(_Model):
    approved_by: str
    decision_sha256: str
    decision_key: str
    event_seq: int
    attempt: int = 1


class ApprovalAnswer(_Model):
    """What the approver is told: the release goes on."""

    release_id: str
    state: eg.ReleaseState
    requested_by: str
    approved_by: str
