"""``custody retention apply``: delete approved evidence whose period has run out.

Per document with an approval under ``retention/<scope>/``, the answer is one
:class:`Disposition`: ``retained`` (the period has not run out), ``due`` (a
dry run's "would delete"), ``deleted``, or why it was left alone
(``approval_invalid``, ``policy_unknown``, ``nothing_to_delete``), or
``awaiting_approval``: due, but the tenant policy's two-person rule wants a second
identity's approval of the deletion request and none valid is there
(``starter.evidence.deletions``); nothing is deleted.

The ``evidence_deleted`` event is appended **before** any object goes, with
each object's key and the SHA-256 of its bytes, and a signed copy is kept at
``retention/<scope>/<sha256>/deletion.json``. A run interrupted after the event
finishes on the next ``apply``, from the keys the event names: never a second
event, never an object deleted that the log does not name.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from custody import ids
from custody.canonical import canonical_json
from custody.errors import IdentityRefused
from custody.ledger.events import Ledger
from custody.ledger.signing import PublicKeyRecord, Signer
from custody.state.tenant_policy import deletions_need_two
from custody.stores import ObjectStore
from starter.evidence import deletions as dl
from starter.evidence.retention import (
    DELETED,
    RetentionPolicy,
    SignedApproval,
    approval_valid,
    concluded_at,
    deletion_record,
    evidence_keys,
    expires_at,
    folder,
    latest_approval,
)

State = Literal[
    "retained",
    "due",
    "deleted",
    "approval_invalid",
    "policy_unknown",
    "nothing_to_delete",
    "awaiting_approval",
]


class Disposition(BaseModel):
    sha256: str
    tenant: str | None
    state: State
    policy: str
    approved_by: str
    expires_at: datetime | None = None
    objects: int = 0
    seq: int | None = None  # the evidence_deleted event
    #: Under the tenant policy's two-person rule: the request and its second identity.
    request_id: str | None = None
    second_approver: str | None = None


class _Hasher:
    """A write-only sink that hashes what it is given (objects are never held whole)."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return len(data)


def approved(store: ObjectStore, tenant: str | None) -> list[str]:
    """SHA-256s of the tenant's documents that have an approval."""
    base = f"retention/{ids.scope(tenant)}/"
    return sorted({k[len(base) :].split("/")[0] for k in store.list(base) if "/approval-" in k})


class Retention:
    """One ``apply`` pass: the policies, the trusted keys, the signer and the clock it uses."""

    def __init__(
        self,
        store: ObjectStore,
        known: dict[str, RetentionPolicy],
        keys: dict[str, PublicKeyRecord],
        signer: Signer,
        now: datetime,
    ) -> None:
        self.store, self.known, self.keys = store, known, keys
        self.signer, self.now = signer, now

    def apply(self, tenant: str | None, *, dry_run: bool = False) -> list[Disposition]:
        """Each approved document of the tenant, deleted when its period has run out."""
        out = []
        for sha256 in approved(self.store, tenant):
            found = latest_approval(self.store, sha256, tenant)
            if found is not None:
                out.append(self._one(tenant, sha256, *found, dry_run=dry_run))
        return out

    def _one(
        self, tenant: str | None, sha256: str, key: str, signed: SignedApproval, *, dry_run: bool
    ) -> Disposition:
        a, store = signed.approval, self.store
        answer = Disposition(
            sha256=sha256, tenant=tenant, state="retained", policy=a.policy, approved_by=a.by
        )
        earlier = deletion_record(store, tenant, sha256)
        if earlier is not None:  # deleted before, perhaps interrupted: finish from the log
            for gone in () if dry_run else earlier.objects:
                store.delete(gone)
            done = {"state": "deleted", "objects": len(earlier.objects), "seq": earlier.seq}
            return answer.model_copy(update=done)
        if a.sha256 != sha256 or a.tenant != tenant or not approval_valid(signed, self.keys):
            return answer.model_copy(update={"state": "approval_invalid"})
        policy = self.known.get(a.policy)
        if policy is None:
            return answer.model_copy(update={"state": "policy_unknown"})
        start = concluded_at(store, sha256, tenant)
        if start is None:
            return answer.model_copy(update={"state": "nothing_to_delete"})
        until = expires_at(start, policy)
        if self.now < until:
            return answer.model_copy(update={"expires_at": until})
        answer = answer.model_copy(update={"expires_at": until} | self._second(tenant, key))
        if deletions_need_two(store, tenant) and answer.second_approver is None:
            return answer.model_copy(update={"state": "awaiting_approval"})
        objects = {k: _hash(store, k) for k in evidence_keys(store, sha256, tenant)}
        answer = answer.model_copy(update={"state": "due"})
        answer.objects = len(objects)
        if dry_run:
            return answer
        seq = self._delete(tenant, sha256, key, signed, policy, objects, answer.second_approver)
        return answer.model_copy(update={"state": "deleted", "seq": seq})

    def _second(self, tenant: str | None, approval_key: str) -> dict[str, str | None]:
        """The deletion request filed for this approval, and who approved it second."""
        rid = dl.request_id("retention", tenant, approval_key)
        try:
            request = dl.load(self.store, rid)
        except IdentityRefused:  # none filed: approved before the rule, or by one person
            return {}
        return {"request_id": rid, "second_approver": dl.approved_by(self.store, request)}

    def _delete(
        self,
        tenant: str | None,
        sha256: str,
        approval_key: str,
        signed: SignedApproval,
        policy: RetentionPolicy,
        objects: dict[str, str],
        second: str | None,
    ) -> int:
        """Log the deletion (signed, checkpointed), keep a signed copy, then delete."""
        detail: dict[str, str | int | list[str] | None] = {
            "policy": policy.name,
            "days": policy.days,
            "approval": approval_key,
            "approval_sha256": hashlib.sha256(canonical_json(signed)).hexdigest(),
            "objects": [f"{key} {digest}" for key, digest in sorted(objects.items())],
        }
        if second is not None:  # the two-person rule: the second identity, named
            detail["second_approver"] = second
        event = Ledger(self.store, tenant).append(
            DELETED, sha256=sha256, actor=signed.approval.by, detail=detail
        )
        body = {"event": event.model_dump(mode="json")}
        body["signature"] = self.signer.sign(canonical_json(body["event"])).model_dump()
        self.store.create(f"{folder(sha256, tenant)}deletion.json", canonical_json(body))
        for key in objects:
            self.store.delete(key)
        return event.seq


def _hash(store: ObjectStore, key: str) -> str:
    sink = _Hasher()
    store.download(key, sink)  # type: ignore[arg-type]
    return sink.digest.hexdigest()
