"""A decision, signed by the key of the person who made it.

    {"kind", "by", "kid", "at", "subject", "sig"}

``subject`` holds what was decided as hashes, ids and codes (a document's
SHA-256, the hash of a sealed correction, a reason code), never free text or
document content. ``sig`` is the identity's own Ed25519 signature over the
canonical JSON of everything else and a purpose string, so a decision is never
mistaken for another record, and a record naming a person carries that
person's proof. :func:`check_decision` verifies one against the registry: the
signature by the identity's key, and the identity valid, with the role, when
the decision was made (``at``) and, for one about to take effect, now.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import BaseModel, ConfigDict

from custody.canonical import canonical_json
from custody.errors import Code, IdentityRefused
from custody.ledger.signing import key_id
from custody.operators.registry import Identity, Role, known
from custody.stores import ObjectStore

_PURPOSE = "custody.operators.decision/1"


class DecisionKind(StrEnum):
    REVIEW = "review"
    QUARANTINE_RELEASE = "quarantine_release"
    QUARANTINE_REJECT = "quarantine_reject"
    RELEASE_APPROVAL = "release_approval"
    REDACTION_APPROVAL = "redaction_approval"
    RETENTION_APPROVE = "retention_approve"
    RETENTION_APPLY = "retention_apply"
    EVIDENCE_DELETION = "evidence_deletion"
    KEY_ROTATE = "key_rotate"
    KEY_SHRED = "key_shred"
    OPERATOR_ADD = "operator_add"
    OPERATOR_REVOKE = "operator_revoke"


#: The role each decision needs (``admin`` holds them all).
_ROLES: dict[DecisionKind, Role] = {
    DecisionKind.REVIEW: Role.REVIEWER,
    DecisionKind.QUARANTINE_RELEASE: Role.REVIEWER,
    DecisionKind.QUARANTINE_REJECT: Role.REVIEWER,
    DecisionKind.RELEASE_APPROVAL: Role.RELEASER,
    DecisionKind.REDACTION_APPROVAL: Role.REVIEWER,
    DecisionKind.RETENTION_APPROVE: Role.ADMIN,
    DecisionKind.RETENTION_APPLY: Role.ADMIN,
    DecisionKind.EVIDENCE_DELETION: Role.ADMIN,
    DecisionKind.KEY_ROTATE: Role.ADMIN,
    DecisionKind.KEY_SHRED: Role.ADMIN,
    DecisionKind.OPERATOR_ADD: Role.ADMIN,
    DecisionKind.OPERATOR_REVOKE: Role.ADMIN,
}


def role_for(kind: DecisionKind) -> Role:
    return _ROLES[kind]


class SignedDecision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: DecisionKind
    by: str
    kid: str
    at: datetime
    subject: dict[str, Any]
    sig: str

    def payload(self) -> bytes:
        body = self.model_dump(mode="json", exclude={"sig"})
        return canonical_json({"purpose": _PURPOSE, **body})

    def sha256(self) -> str:
        """The hash ledger events name the decision by."""
        return hashlib.sha256(canonical_json(self)).hexdigest()


def sign(
    private: Ed25519PrivateKey, name: str, kind: DecisionKind, subject: dict[str, Any]
) -> SignedDecision:
    unsigned = SignedDecision(
        kind=kind,
        by=name,
        kid=key_id(private.public_key()),
        at=datetime.now(UTC),
        subject=subject,
        sig="",
    )
    sig = base64.b64encode(private.sign(unsigned.payload())).decode()
    return unsigned.model_copy(update={"sig": sig})


def check_decision(
    store: ObjectStore, decision: SignedDecision, *, now: datetime | None = None
) -> Identity:
    """The identity that made ``decision``, once its signature and standing are checked.

    ``now`` (a decision about to take effect): the identity must also be valid
    then, so a decision signed before a revocation is not applied after it.
    """
    identity = known(store, decision.by)
    if identity.kid != decision.kid:
        raise IdentityRefused(Code.DECISION_INVALID, "signed by another key")
    try:
        identity.public().verify(base64.b64decode(decision.sig, validate=True), decision.payload())
    except (InvalidSignature, ValueError):
        raise IdentityRefused(Code.DECISION_INVALID, "the signature does not verify") from None
    for at in (decision.at, *([now] if now else [])):
        why = identity.refusal(role_for(decision.kind), at)
        if why is not None:
            raise IdentityRefused(*why)
    return identity
