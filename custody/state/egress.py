"""Egress state in the object store: policies, recipients and egress events.

Policies are versioned and create-only: adding a policy under a name that
exists makes its next version, and every version is also kept by its hash, so
a release pins the exact policy it started with even if a newer one appears
while it runs. Recipients are create-only too; a revocation is a second object
created beside the registration, so restoring an old copy cannot undo it.

Egress events live in the tenant's ledger (``custody.ledger``) with an index
of their sequence numbers under ``egress/<tenant>/index/``, written before the
event claims its number, so ``custody egress ls`` never has to read every
event and never misses one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from pydantic import BaseModel

from custody import egress as eg
from custody.canonical import canonical_json
from custody.errors import Code, EgressRefused
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signature, Signer
from custody.stores import ObjectStore
from custody.stores.base import ObjectMissing


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- policies -------------------------------------------------------------------


def add_policy(store: ObjectStore, tenant: str | None, policy: eg.Policy) -> tuple[int, str]:
    """Store ``policy`` as the next version of its name; (version, sha256).

    Built-in names cannot be redefined. The same body stored again is not a
    new version: its existing version is returned.
    """
    if policy.name in eg.BUILTIN_POLICIES:
        raise EgressRefused(Code.POLICY_INVALID, f"policy {policy.name} is built in")
    sha = policy.sha256()
    versions = _versions(store, tenant, policy.name)
    for version in versions:
        if sha256_bytes(store.get(eg.policy_key(tenant, policy.name, version))) == sha:
            return version, sha
    version = (versions[-1] if versions else 0) + 1
    store.create(eg.policy_by_hash_key(tenant, sha), policy.canonical())
    if not store.create(eg.policy_key(tenant, policy.name, version), policy.canonical()):
        raise EgressRefused(Code.POLICY_INVALID, "a concurrent change took that version; retry")
    return version, sha


def _versions(store: ObjectStore, tenant: str | None, name: str) -> list[int]:
    prefix = eg.policy_prefix(tenant, name)
    return sorted(int(k[len(prefix) : -5]) for k in store.list(prefix))


def current_policy(store: ObjectStore, tenant: str | None, name: str) -> eg.Policy:
    """The newest version of ``name`` (built-ins answer for their own names)."""
    if name in eg.BUILTIN_POLICIES:
        return eg.BUILTIN_POLICIES[name]
    versions = _versions(store, tenant, eg.check_name(name))
    if not versions:
        raise EgressRefused(Code.POLICY_UNKNOWN, f"no policy {name}")
    return eg.Policy.model_validate_json(store.get(eg.policy_key(tenant, name, versions[-1])))


def pinned_policy(store: ObjectStore, tenant: str | None, sha256: str) -> eg.Policy:
    """The policy with exactly this hash; its stored bytes are re-hashed."""
    for builtin in eg.BUILTIN_POLICIES.values():
        if builtin.sha256() == sha256:
            return builtin
    try:
        body = store.get(eg.policy_by_hash_key(tenant, sha256))
    except (ObjectMissing, KeyError):
        raise EgressRefused(Code.POLICY_UNKNOWN, f"no policy with hash {sha256[:12]}") from None
    policy = eg.Policy.model_validate_json(body)
    if policy.sha256() != sha256:
        raise EgressRefused(Code.POLICY_INVALID, f"stored policy {sha256[:12]} does not hash")
    return policy


def list_policies(store: ObjectStore, tenant: str | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"name": p.name, "version": 0, "sha256": p.sha256(), "builtin": True}
        for p in eg.BUILTIN_POLICIES.values()
    ]
    prefix = eg.policy_prefix(tenant)
    for key in store.list(prefix):
        name, _, version = key[len(prefix) :].partition("/")
        if name == "by-hash":
            continue
        body = store.get(key)
        rows.append(
            {"name": name, "version": int(version[:-5]), "sha256": sha256_bytes(body)}
            | {"builtin": False}
        )
    return rows


# --- recipients -----------------------------------------------------------------


def add_recipient(store: ObjectStore, recipient: eg.Recipient) -> bool:
    """Register once; False when the name is taken (its registration is never replaced)."""
    return store.create(
        eg.recipient_key(recipient.tenant, recipient.name), canonical_json(recipient)
    )


def revoke_recipient(store: ObjectStore, tenant: str | None, name: str, by: str) -> bool:
    get_recipient(store, tenant, name, allow_revoked=True)
    body = {"revoked_at": datetime.now(UTC).isoformat(), "by": by}
    return store.create(eg.recipient_revoked_key(tenant, name), canonical_json(body))


def get_recipient(
    store: ObjectStore, tenant: str | None, name: str, *, allow_revoked: bool = False
) -> eg.Recipient:
    try:
        recipient = eg.Recipient.model_validate_json(store.get(eg.recipient_key(tenant, name)))
    except (ObjectMissing, KeyError):
        raise EgressRefused(Code.RECIPIENT_UNKNOWN, f"no recipient {name}") from None
    if not allow_revoked and store.exists(eg.recipient_revoked_key(tenant, name)):
        raise EgressRefused(Code.RECIPIENT_REVOKED, f"recipient {name} is revoked")
    return recipient


def list_recipients(store: ObjectStore, tenant: str | None) -> list[dict[str, object]]:
    prefix = eg.recipients_prefix(tenant)
    rows = []
    for key in store.list(prefix):
        if not key.endswith(".json"):
            continue
        r = eg.Recipient.model_validate_json(store.get(key))
        revoked = store.exists(eg.recipient_revoked_key(tenant, r.name))
        rows.append(r.model_dump(mode="json") | {"revoked": revoked})
    return rows


# --- egress events --------------------------------------------------------------


def record_egress(
    store: ObjectStore,
    tenant: str | None,
    kind: eg.EgressKind,
    *,
    actor: str,
    policy: eg.Policy,
    documents: list[str],
    bytes_sha256: str,
    size: int,
    release_id: str | None = None,
    recipient: str | None = None,
    workflow_id: str | None = None,
    run_id: str | None = None,
    once: str | None = None,
) -> Event:
    """Append the egress event that must precede handing out the bytes.

    Raises whatever the store raises: a caller that cannot record must not
    hand anything out. With ``once`` (a release's key), a retry finds the event
    an earlier attempt appended instead of appending a second one.
    """
    detail: dict[str, str | int | float | bool | list[str] | None] = {
        "egress_kind": kind.value,
        "policy": policy.name,
        "policy_sha256": policy.sha256(),
        "bytes_sha256": bytes_sha256,
        "bytes": size,
        "documents": sorted(documents),
        "release_id": release_id,
        "recipient": recipient,
    }
    fields: dict[str, object] = {
        "sha256": documents[0] if len(documents) == 1 else None,
        "actor": actor,
        "workflow_id": workflow_id,
        "run_id": run_id,
        "detail": detail,
    }

    def index(seq: int) -> str:
        return eg.egress_index_key(tenant, seq)

    if once is None:
        return Ledger(store, tenant).append(
            eg.EGRESS_EVENT, markers=lambda seq: [index(seq)], **fields
        )
    return append_once(store, tenant, eg.EGRESS_EVENT, once=once, extra=[index], **fields)


def append_once(
    store: ObjectStore,
    tenant: str | None,
    kind: str,
    *,
    once: str,
    extra: list[Callable[[int], str]] | None = None,
    **fields: object,
) -> Event:
    """Append ``kind`` unless an earlier attempt did; markers under ``once/`` say where.

    The marker is created before the event claims its number (as the ledger's
    own index is), so an attempt that died after appending leaves a marker
    that the next attempt follows to the event instead of appending again.
    """
    ledger = Ledger(store, tenant)
    prefix = f"{once}/seq/"
    for key in store.list(prefix):
        event = ledger.find(int(key[len(prefix) :]))
        if (
            event is not None
            and event.kind == kind
            and event.workflow_id == fields.get("workflow_id")
        ):
            return event
    markers = [lambda seq: f"{prefix}{seq:012d}", *(extra or [])]
    return ledger.append(kind, markers=lambda seq: [m(seq) for m in markers], **fields)


class SignedReceipt(BaseModel):
    """A release receipt and its signature; verified over its stored bytes, not this model.

    ``starter.evidence.verify.egress.stored_receipt_checks`` checks a stored receipt: this
    model drops unknown members and forgets whitespace, order and number forms.
    """

    receipt: eg.Receipt
    signature: Signature

    @classmethod
    def sign(cls, receipt: eg.Receipt, signer: Signer) -> SignedReceipt:
        return cls(receipt=receipt, signature=signer.sign(canonical_json(receipt)))

    def canonical(self) -> bytes:
        return canonical_json(self)


def hand_out(
    store: ObjectStore,
    tenant: str | None,
    kind: eg.EgressKind,
    data: bytes,
    *,
    actor: str,
    documents: list[str],
) -> bytes:
    """``data``, once the egress event for exactly these bytes is in the ledger.

    Every path that hands document content to anyone (an HTTP read, ``custody
    result``, an evidence bundle) passes its bytes through here; if the event
    cannot be written this raises and the caller hands out nothing.
    """
    policies = {eg.EgressKind.READ: eg.READ_POLICY, eg.EgressKind.REVIEW: eg.REVIEW_POLICY}
    policy = policies.get(kind, eg.EXPORT_POLICY)
    record_egress(
        store,
        tenant,
        kind,
        actor=actor,
        policy=policy,
        documents=documents,
        bytes_sha256=sha256_bytes(data),
        size=len(data),
    )
    return data


def egress_events(store: ObjectStore, tenant: str | None) -> Iterator[eg.EgressRecord]:
    """Every egress event of the tenant, oldest first, from the index."""
    prefix = eg.egress_index_prefix(tenant)
    ledger = Ledger(store, tenant)
    for key in store.list(prefix):
        event = ledger.find(int(key[len(prefix) :]))
        if event is not None and event.kind == eg.EGRESS_EVENT:
            yield _to_record(event, tenant)


def _to_record(event: Event, tenant: str | None) -> eg.EgressRecord:
    d = event.detail
    docs = d.get("documents")
    return eg.EgressRecord(
        kind=eg.EgressKind(str(d["egress_kind"])),
        release_id=_opt(d.get("release_id")),
        recipient=_opt(d.get("recipient")),
        actor=event.actor or "",
        tenant=tenant,
        policy=str(d.get("policy")),
        policy_sha256=str(d.get("policy_sha256")),
        bytes_sha256=str(d.get("bytes_sha256")),
        documents=list(docs) if isinstance(docs, list) else [],
        at=event.at,
        seq=event.seq,
    )


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
