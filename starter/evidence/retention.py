"""Evidence retention: policies, an owner's signed approval, deletion that leaves evidence.

A document's evidence (source, results, record, outcomes, packet, decisions)
is kept for its policy's period from the day it concluded, and goes only when
that period has run out **and** an evidence owner approved it
(``custody retention approve``). Nothing else deletes evidence: quarantined
sources included.

An approval is a signed object ``retention/<scope>/<sha256>/approval-<at>.json``
and a ``retention_approved`` ledger event. A deletion (starter.evidence.retention_apply)
first appends an ``evidence_deleted`` event naming every object key with the
SHA-256 of its bytes, the approver, the policy and the approval, then removes
the objects: the log (checkpointed, witnessed) keeps the fact, and
:func:`deletion_record` lets ``verify`` answer "deleted with evidence" rather
than "tampered". The ledger and ``retention/`` are never part of what is deleted.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

from custody import ids
from custody.canonical import canonical_json
from custody.errors import ConfigurationError, NotFound
from custody.ledger.events import Ledger
from custody.ledger.signing import PublicKeyRecord, Signature, Signer, verify
from custody.models import OutcomeRecord, SignedRecord
from custody.operators import SignedDecision
from custody.settings import Settings
from custody.stores import ObjectStore

APPROVED, DELETED = "retention_approved", "evidence_deleted"


class RetentionPolicy(BaseModel):
    name: str
    days: int


class Approval(BaseModel):
    sha256: str
    tenant: str | None
    by: str
    policy: str
    days: int
    approved_at: datetime


class SignedApproval(BaseModel):
    approval: Approval
    signature: Signature
    #: The approver's own signed decision (custody.operators); None on approvals
    #: from before named identities.
    decision: SignedDecision | None = None


class DeletionRecord(BaseModel):
    """What a deletion left in the log: the hook ``verify`` calls for a deleted document."""

    sha256: str
    tenant: str | None
    seq: int  # the ledger event
    event_hash: str
    deleted_at: datetime
    policy: str
    approved_by: str | None
    approval_key: str
    #: object key -> SHA-256 of its bytes when deleted
    objects: dict[str, str]


def policies(settings: Settings) -> dict[str, RetentionPolicy]:
    """``CUSTODY_RETENTION_POLICIES`` ("evidence=2557,billing=3650") by name."""
    found = {}
    for item in filter(None, (p.strip() for p in settings.retention_policies.split(","))):
        name, _, days = item.partition("=")
        if not name.strip() or not days.strip().isdigit() or int(days) < 1:
            raise ConfigurationError(detail="CUSTODY_RETENTION_POLICIES: name=days,...")
        found[name.strip()] = RetentionPolicy(name=name.strip(), days=int(days))
    return found


def folder(sha256: str, tenant: str | None) -> str:
    return f"retention/{ids.scope(tenant)}/{ids.check_sha256(sha256)}/"


def concluded_at(store: ObjectStore, sha256: str, tenant: str | None) -> datetime | None:
    """When the document was published or last concluded: its retention clock's start."""
    record = ids.record_key(sha256, tenant)
    if store.exists(record):
        return SignedRecord.model_validate_json(store.get(record)).record.published_at
    outcomes = [
        OutcomeRecord.model_validate_json(store.get(k)).concluded_at
        for k in store.list(ids.outcome_prefix(sha256, tenant))
    ]
    return max(outcomes, default=None)


def evidence_keys(store: ObjectStore, sha256: str, tenant: str | None) -> list[str]:
    """Every object that holds the document's evidence (not the ledger, not retention/)."""
    s = ids.scope(tenant)
    singles = [ids.intake_key(sha256, tenant), ids.source_key(sha256, tenant)]
    singles += [ids.record_key(sha256, tenant), f"manual/{s}/{sha256}.bin"]
    singles += [f"manual/{s}/{sha256}.json"]
    folders = [ids.outcome_prefix(sha256, tenant), f"results/{s}/{sha256}/"]
    folders += [f"evidence/{s}/{sha256}/", f"decisions/{s}/{sha256}/"]
    folders += [ids.work_prefix(sha256, tenant)]
    keys = [k for k in singles if store.exists(k)]
    return keys + [k for f in folders for k in store.list(f)]


def approve(
    store: ObjectStore,
    signer: Signer,
    policy: RetentionPolicy,
    sha256: str,
    tenant: str | None,
    decision: SignedDecision,
) -> tuple[str, SignedApproval]:
    """Record an evidence owner's approval, signed by them and by the system key; the
    deletion waits for the period."""
    if concluded_at(store, sha256, tenant) is None:
        raise NotFound(f"{sha256} (no published record or outcome)")
    body = Approval(
        sha256=sha256, tenant=tenant, by=decision.by, policy=policy.name, days=policy.days,
        approved_at=datetime.now(UTC),
    )  # fmt: skip
    signature = signer.sign(canonical_json(body))
    signed = SignedApproval(approval=body, signature=signature, decision=decision)
    key = f"{folder(sha256, tenant)}approval-{body.approved_at:%Y%m%dT%H%M%S%fZ}.json"
    data = canonical_json(signed)
    store.create(key, data)
    Ledger(store, tenant).append(
        APPROVED,
        sha256=sha256,
        actor=decision.by,
        detail={"policy": policy.name, "approval": key,
                "approval_sha256": hashlib.sha256(data).hexdigest()},
    )  # fmt: skip
    return key, signed


def latest_approval(
    store: ObjectStore, sha256: str, tenant: str | None
) -> tuple[str, SignedApproval] | None:
    keys = [k for k in store.list(folder(sha256, tenant)) if "/approval-" in k]
    if not keys:
        return None
    return keys[-1], SignedApproval.model_validate_json(store.get(keys[-1]))


def approval_valid(signed: SignedApproval, keys: dict[str, PublicKeyRecord]) -> bool:
    """Signed by a trusted key (the caller passes only trusted keys)."""
    return verify(canonical_json(signed.approval), signed.signature, keys) is None


def expires_at(concluded: datetime, policy: RetentionPolicy) -> datetime:
    return concluded + timedelta(days=policy.days)


def deletion_record(store: ObjectStore, tenant: str | None, sha256: str) -> DeletionRecord | None:
    """The document's deletion as the log holds it; None when it was never deleted.

    For ``verify``: a document whose objects are gone and which has this record
    was deleted with evidence; one without it was tampered with.
    """
    events = [e for e in Ledger(store, tenant).for_document(sha256) if e.kind == DELETED]
    if not events:
        return None
    event, detail = events[-1], events[-1].detail
    listed = detail.get("objects")
    pairs = [str(item).rsplit(" ", 1) for item in listed] if isinstance(listed, list) else []
    return DeletionRecord(
        sha256=sha256,
        tenant=tenant,
        seq=event.seq,
        event_hash=event.hash,
        deleted_at=event.at,
        policy=str(detail.get("policy", "")),
        approved_by=event.actor,
        approval_key=str(detail.get("approval", "")),
        objects={key: digest for key, digest in pairs},
    )
