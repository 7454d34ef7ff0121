"""Egress state in the object store: policies, recipients and egress events.

Policies are versioned and create-only: adding a policy under a name that
exists makes its next version, and every version is also kept by its hash, so
a release pins the exact policy it started with even if a newer one appears
while it runs. Recipients are create-only too; a revocation is security state
like a tenant's record: a signed, chained version (custody.state.versions,
logged in the system log), so deleting it is refused as a rollback
(``STATE_INVALID``) rather than un-revoking the recipient. A revocation made
before that, a create-only marker beside the registration, is still honoured.

Egress events live in the tenant's ledger (``custody.ledger``) with an index
of their sequence numbers under ``egress/<tenant>/index/``, made with the event
(custody.ledger.sequencer), so ``custody egress ls`` never has to read every
event and never misses one.

An event of several documents commits to each by a salted hash,
``sha256(salt || sha256)`` (``documents_salted``), never by the hashes
themselves: its bytes go into every one of those documents' evidence bundles
with that document's salt alone, and must not tell one document's auditor
which others left with it. The list and the salts are kept in a sealed object
(``egress/<tenant>/documents/<ref>.json``, named by the event's
``documents_ref``) that readers with the tenant's key open.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from pydantic import BaseModel

from custody import egress as eg
from custody.canonical import canonical_json
from custody.errors import Code, EgressRefused
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signature, Signer
from custody.state import versions
from custody.state.tenant_policy import default_purpose
from custody.stores import ObjectStore
from custody.stores.base import ObjectMissing, StoreError


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
    """Revoke for good, as a signed version; False when a version already revokes it."""
    get_recipient(store, tenant, name, allow_revoked=True)
    prefix = eg.recipient_revocation_prefix(tenant, name)
    current = versions.latest(store, prefix)
    if current is not None and json.loads(current).get("revoked"):
        return False
    body = {"revoked": True, "revoked_at": datetime.now(UTC).isoformat(), "by": by}
    versions.append(store, prefix, canonical_json(body))
    return True


def _revoked(store: ObjectStore, tenant: str | None, name: str) -> bool:
    """A verified version says so, or a marker from before versions (honoured, never lifted)."""
    current = versions.latest(store, eg.recipient_revocation_prefix(tenant, name))
    if current is not None and json.loads(current).get("revoked"):
        return True
    return store.exists(eg.recipient_revoked_key(tenant, name))


def get_recipient(
    store: ObjectStore, tenant: str | None, name: str, *, allow_revoked: bool = False
) -> eg.Recipient:
    try:
        recipient = eg.Recipient.model_validate_json(store.get(eg.recipient_key(tenant, name)))
    except (ObjectMissing, KeyError):
        raise EgressRefused(Code.RECIPIENT_UNKNOWN, f"no recipient {name}") from None
    if not allow_revoked and _revoked(store, tenant, name):
        raise EgressRefused(Code.RECIPIENT_REVOKED, f"recipient {name} is revoked")
    return recipient


def list_recipients(store: ObjectStore, tenant: str | None) -> list[dict[str, object]]:
    prefix = eg.recipients_prefix(tenant)
    rows = []
    for key in store.list(prefix):
        if not key.endswith(".json") or "/" in key[len(prefix) :]:  # a revocation's versions
            continue
        r = eg.Recipient.model_validate_json(store.get(key))
        revoked = _revoked(store, tenant, r.name)
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
    purpose: str | None = None,
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
        **_documents(store, tenant, documents),
        "release_id": release_id,
        "recipient": recipient,
    }
    if purpose is not None:  # the accounting of disclosures; absent from older events
        detail["purpose"] = eg.check_purpose(purpose)
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


def salted(salt: str, sha256: str) -> str:
    """A document's commitment in an event of several: it shows only with the salt."""
    return hashlib.sha256(f"{salt}{sha256}".encode()).hexdigest()


def _documents(
    store: ObjectStore, tenant: str | None, documents: list[str]
) -> dict[str, str | list[str]]:
    """The event's documents: one in the clear (its own event), several by salted hashes."""
    if len(set(documents)) <= 1:
        return {"documents": sorted(set(documents))}
    salts = {doc: secrets.token_hex(16) for doc in sorted(set(documents))}
    ref = secrets.token_hex(16)
    body = {"documents": sorted(salts), "salts": salts}
    store.create(eg.egress_documents_key(tenant, ref), canonical_json(body))  # before the event
    commitments = sorted(salted(salt, doc) for doc, salt in salts.items())
    return {"documents_salted": commitments, "documents_ref": ref}


def event_salts(store: ObjectStore, tenant: str | None, event: Event) -> dict[str, str]:
    """Document -> salt of an event of several documents ({} when none or unreadable)."""
    ref = event.detail.get("documents_ref")
    if not isinstance(ref, str):
        return {}
    try:
        body = json.loads(store.get(eg.egress_documents_key(tenant, ref)))
        salts = {str(d): str(s) for d, s in body["salts"].items()}
    except (ObjectMissing, StoreError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    committed = event.detail.get("documents_salted")
    if not isinstance(committed, list):
        return {}
    return {d: s for d, s in salts.items() if salted(s, d) in committed}


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
    # An earlier attempt's batch may not be integrated yet: its markers are still due.
    for key in [*store.list(prefix), *ledger.pending_markers(prefix)]:
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
    purpose: str | None = None,
) -> bytes:
    """``data``, once the egress event for exactly these bytes is in the ledger.

    Every path that hands document content to anyone (an HTTP read, ``custody
    result``, an evidence bundle) passes its bytes through here; if the event
    cannot be written this raises and the caller hands out nothing. ``purpose``:
    the request's purpose of disclosure, else the tenant policy's
    (``custody.state.tenant_policy``), else none.
    """
    policies = {eg.EgressKind.READ: eg.READ_POLICY, eg.EgressKind.REVIEW: eg.REVIEW_POLICY}
    policy = policies.get(kind, eg.EXPORT_POLICY)
    if purpose is None:  # the request named none: the tenant policy's, if it has one
        purpose = default_purpose(store, tenant)
    record_egress(
        store,
        tenant,
        kind,
        actor=actor,
        policy=policy,
        documents=documents,
        bytes_sha256=sha256_bytes(data),
        size=len(data),
        purpose=purpose,
    )
    return data


def egress_events(store: ObjectStore, tenant: str | None) -> Iterator[eg.EgressRecord]:
    """Every egress event of the tenant, oldest first, from the index."""
    prefix = eg.egress_index_prefix(tenant)
    ledger = Ledger(store, tenant)
    for key in store.list(prefix):
        event = ledger.find(int(key[len(prefix) :]))
        if event is not None and event.kind == eg.EGRESS_EVENT:
            yield _to_record(store, event, tenant)


def _files(
    store: ObjectStore, tenant: str | None, rid: str | None, sha: str
) -> list[eg.PacketEntry]:
    """A release's files in packet order, from its listing (else, for a release rendered
    before listings, its signed receipt); only a list that hashes to the event's
    ``bytes_sha256``. None for reads and exports."""
    if rid is None:
        return []
    for listed in (
        _stored(store, eg.release_packet_key(tenant, rid)),
        _receipt_files(store, tenant, rid),
    ):
        entries = [eg.PacketEntry.model_validate(f) for f in listed]
        refs = [eg.FileRef(**e.model_dump(), media_type="") for e in entries]
        if entries and eg.packet_sha256(refs) == sha:
            return entries
    return []


def _stored(store: ObjectStore, key: str) -> list[dict[str, object]]:
    try:
        files = json.loads(store.get(key))["files"]
    except (ObjectMissing, KeyError, ValueError):
        return []
    return files if isinstance(files, list) else []


def _receipt_files(store: ObjectStore, tenant: str | None, rid: str) -> list[dict[str, object]]:
    try:
        receipt = SignedReceipt.model_validate_json(store.get(eg.receipt_key(tenant, rid))).receipt
    except (ObjectMissing, KeyError, ValueError):
        return []
    return [{"name": f.name, "sha256": f.sha256, "bytes": f.bytes} for f in receipt.files]


def _to_record(store: ObjectStore, event: Event, tenant: str | None) -> eg.EgressRecord:
    d = event.detail
    docs = d.get("documents") if "documents" in d else sorted(event_salts(store, tenant, event))
    rid, sha = _opt(d.get("release_id")), str(d.get("bytes_sha256"))
    files = _files(store, tenant, rid, sha) if d.get("egress_kind") == "release" else []
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
        files=files,
        purpose=_opt(d.get("purpose")),
    )


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
