"""Evidence for compliance staff: verify, quarantine decisions, search (bundles: export.py).

Everything here reads the object store, not Temporal, so it works long after
Temporal has forgotten a run. Operator actions are appended to the audit
ledger (verification writes nothing); free-text reasons are stored as
decision objects and only their hash enters the ledger.
"""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime

from pydantic import BaseModel

from custody import ids
from custody.canonical import canonical_json
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.models import OutcomeRecord, SignedRecord
from custody.operators import SignedDecision
from custody.stores import ObjectStore
from starter.evidence.export import export_bundle as export_bundle
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import LogProofs, Report, verify_document


class DocumentRef(BaseModel):
    sha256: str
    tenant: str | None
    state: str
    code: str | None = None
    source_id: str | None = None
    at: datetime
    run_id: str


def verify(
    store: ObjectStore,
    sha256: str,
    tenant: str | None,
    anchors: TrustAnchors,
    proofs: LogProofs | None = None,
) -> Report:
    """``custody verify``: it reads and writes nothing. A verifier that appended its own
    events would change the log it checks (and leave events no checkpoint covers)."""
    keys = public_keys(store)
    return verify_document(store, keys, sha256, tenant, anchors=anchors, proofs=proofs)


def _prefix(kind: str, tenant: str | None, all_tenants: bool) -> str:
    """One tenant's folder (no tenant: ``_``); every tenant's only when asked outright."""
    return f"{kind}/" if all_tenants else f"{kind}/{ids.scope(ids.check_tenant(tenant))}/"


def published(
    store: ObjectStore, tenant: str | None = None, *, all_tenants: bool = False
) -> list[DocumentRef]:
    prefix = _prefix("records", tenant, all_tenants)
    refs = []
    for key in store.list(prefix):
        record = SignedRecord.model_validate_json(store.get(key)).record
        refs.append(
            DocumentRef(
                sha256=record.sha256,
                tenant=record.tenant,
                state="published",
                source_id=record.source_id,
                at=record.published_at,
                run_id=record.run_id,
            )
        )
    return refs


def concluded(
    store: ObjectStore, tenant: str | None = None, *, all_tenants: bool = False
) -> list[DocumentRef]:
    """The latest rejection or quarantine of each document."""
    prefix = _prefix("outcomes", tenant, all_tenants)
    latest: dict[tuple[str | None, str], OutcomeRecord] = {}
    for key in store.list(prefix):
        o = OutcomeRecord.model_validate_json(store.get(key))
        if (o.tenant, o.sha256) not in latest or latest[
            (o.tenant, o.sha256)
        ].concluded_at < o.concluded_at:
            latest[(o.tenant, o.sha256)] = o
    return [
        DocumentRef(
            sha256=o.sha256,
            tenant=o.tenant,
            state=o.state.value,
            code=o.code,
            source_id=o.source_id,
            at=o.concluded_at,
            run_id=o.run_id,
        )
        for o in latest.values()
    ]


def find(
    store: ObjectStore,
    *,
    tenant: str | None = None,
    source_id: str | None = None,
    state: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    all_tenants: bool = False,
) -> list[DocumentRef]:
    """Documents by tenant, source, state and time, from the evidence store alone.

    One tenant's documents (``tenant=None``: those submitted without one); every
    tenant's only with ``all_tenants``, an operator's explicit choice.
    """
    refs = published(store, tenant, all_tenants=all_tenants)
    refs += concluded(store, tenant, all_tenants=all_tenants)
    done = {(r.tenant, r.sha256) for r in refs if r.state == "published"}
    refs = [r for r in refs if r.state == "published" or (r.tenant, r.sha256) not in done]
    refs = [
        r
        for r in refs
        if (source_id is None or r.source_id == source_id)
        and (state is None or r.state == state)
        and (since is None or r.at >= since)
        and (until is None or r.at <= until)
    ]
    return sorted(refs, key=lambda r: r.at, reverse=True)


def sample(refs: list[DocumentRef], n: int, seed: int | None = None) -> list[DocumentRef]:
    return random.Random(seed).sample(refs, min(n, len(refs)))


def decide(
    store: ObjectStore,
    sha256: str,
    tenant: str | None,
    action: str,
    decision: SignedDecision,
    reason: str,
) -> str:
    """Record a person's signed decision on a quarantined document; returns the decision key.

    The reason (free text) is kept beside the decision in the store; the ledger
    gets its hash and the decision's, and names the person who signed it.
    """
    at = datetime.now(UTC)
    key = f"decisions/{ids.scope(tenant)}/{sha256}/{at:%Y%m%dT%H%M%S%fZ}-{action}.json"
    body = {
        "sha256": sha256,
        "tenant": tenant,
        "action": action,
        "by": decision.by,
        "reason": reason,
        "at": at.isoformat(),
        "decision": decision.model_dump(mode="json"),
    }
    store.create(key, canonical_json(body))
    reason_hash = hashlib.sha256(reason.encode()).hexdigest()
    Ledger(store, tenant).append(
        f"quarantine_{action}",
        sha256=sha256,
        actor=decision.by,
        detail={
            "reason_sha256": reason_hash,
            "decision": key,
            "decision_sha256": decision.sha256(),
        },
    )
    return key


def final_decision(store: ObjectStore, sha256: str, tenant: str | None) -> str | None:
    """The newest quarantine decision (``release`` or ``reject``); other decisions kept
    beside them (a redaction's approval, a review) are not quarantine decisions."""
    keys = [
        k
        for k in store.list(f"decisions/{ids.scope(tenant)}/{sha256}/")
        if k.endswith(("-release.json", "-reject.json"))
    ]
    return keys[-1].rsplit("-", 1)[-1].removesuffix(".json") if keys else None
