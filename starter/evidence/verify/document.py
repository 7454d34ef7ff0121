"""Verification is a replay, not a green dashboard.

For one document every stored object that belongs to it is read and checked
against what pins it (``starter.evidence.verify.objects`` lists the checks): the signed
record's exact stored bytes under a key trusted outside the store
(``starter.evidence.trust``), the evidence packet, the source, text, pages and
searchable PDF, its outcomes, its by-document index entries, the receipts of
releases that carried it, the ledger chain around its events, each event's
inclusion proof in the newest trusted checkpoint (``starter.evidence.verify.proofs``)
and, on a versioned bucket, every object's version history. The tenant's whole
log (its Merkle tree, signed checkpoints and witness) is ``verify_ledger``,
which ``starter.evidence.verify.audit`` answers. Each check is named, so a FAIL says
exactly what does not hold.

Trust is never implied: both take the caller's :class:`TrustAnchors`, and a key
merely found in the store verifies nothing.
"""

from __future__ import annotations

import re
from datetime import datetime

from custody import ids
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import PublicKeyRecord, Signature
from custody.ledger.witness import WitnessPolicy
from custody.models import SignedRecord
from custody.stores import ObjectStore
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.audit import verify_log
from starter.evidence.verify.ledger import chain_check, document_ledger_checks
from starter.evidence.verify.objects import (
    SignatureCheck,
    content_check,
    content_checks,
    field_index_check,
    index_check,
    outcome_check,
    packet_checks,
    read,
    record_checks,
    record_ledger_check,
)
from starter.evidence.verify.proofs import LogProofs
from starter.evidence.verify.receipts import receipt_checks
from starter.evidence.verify.redactions import redaction_checks
from starter.evidence.verify.report import Check, Report, failed
from starter.evidence.verify.report import report as _report
from starter.evidence.verify.reviews import review_checks
from starter.evidence.verify.versions import versions_check

_SHA = re.compile(r"^[0-9a-f]{64}$")

__all__ = [
    "Check",
    "LogProofs",
    "Report",
    "published_documents",
    "verify_document",
    "verify_ledger",
]


def _signature_check(keys: dict[str, PublicKeyRecord], anchors: TrustAnchors) -> SignatureCheck:
    """Signatures by trusted keys only; a key found in ``keys`` (the store's) grants nothing."""

    def check(body: bytes, sig: Signature, at: datetime) -> str | None:
        return anchors.verify(body, sig, keys, at=at)

    return check


def verify_document(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    sha256: str,
    tenant: str | None,
    *,
    anchors: TrustAnchors,
    proofs: LogProofs | None = None,
) -> Report:
    """Every check of one document. ``keys`` is where signers' public keys are found
    (the store's ``public_keys``); ``anchors`` decides which of them are trusted;
    ``proofs`` proves its events in the log (give one per run: it holds the witness
    and reads each log once)."""
    subject = ids.workflow_id(sha256, tenant)
    ledger = Ledger(store, tenant)
    events = ledger.for_document(sha256)
    raw = read(store, ids.record_key(sha256, tenant))
    if raw == "missing":
        checks = _concluded_checks(store, ledger, sha256, events) or [
            failed("record.exists", "record missing")
        ]
    elif isinstance(raw, str):  # a record that no longer opens is altered, not absent
        checks = [failed("record.parse", f"record {raw}")]
    else:
        checks = _published_checks(store, keys, anchors, ledger, raw, sha256, events)
    seqs = {e.seq for e in events} | set(ledger.indexed_seqs(sha256)) | _packet_seq(raw)
    trusted = anchors.trusted(keys)
    checks += (proofs or LogProofs()).checks(ledger, seqs, trusted)
    checks.insert(0, _trust_check(anchors))
    return _report(subject, checks + _versions(store, sha256, tenant, sorted(seqs)), anchors.label)


def _trust_check(anchors: TrustAnchors) -> Check:
    """Which keys were trusted, so a report says when it rests on the development default."""
    count = f"{len(anchors.fingerprints)} keys"
    if anchors.source == "pinned":
        return Check(name="trust.anchors", ok=True, detail=f"{anchors.label}: {count}")
    why = "development default; pin with --trust FPR or CUSTODY_TRUST_FPRS"
    return Check(name="trust.anchors", ok=True, detail=f"{anchors.label} ({why}): {count}")


def _packet_seq(raw: bytes | str) -> set[int]:
    """The record's packet event, so an event the index and the log both lost is still proven."""
    if isinstance(raw, str):
        return set()
    try:
        packet = SignedRecord.model_validate_json(raw).record.packet_event
    except ValueError:
        return set()
    return {packet.seq} if packet else set()


def _published_checks(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    anchors: TrustAnchors,
    ledger: Ledger,
    raw: bytes,
    sha256: str,
    events: list[Event],
) -> list[Check]:
    tenant = ledger.tenant
    try:
        signed = SignedRecord.model_validate_json(raw)
    except ValueError:
        return [failed("record.parse", "record unreadable")]
    record = signed.record
    packet_seq = record.packet_event.seq if record.packet_event else None
    index, indexed = index_check(ledger, sha256, {packet_seq} if packet_seq else set())
    checks = [
        *record_checks(raw, signed, _signature_check(keys, anchors)),
        Check(name="record.subject", ok=record.sha256 == sha256 and record.tenant == tenant),
        record_ledger_check(raw, events),
        *packet_checks(store, record, events),
        *content_checks(store, record),
        index,
    ]
    outcome = outcome_check(store, sha256, tenant, events)
    checks += [outcome] if outcome else []
    indexed_fields = field_index_check(store, record)
    checks += [indexed_fields] if indexed_fields else []
    checks += receipt_checks(store, anchors.trusted(keys), sha256, tenant)
    checks += redaction_checks(ledger, sha256, raw, events, _signature_check(keys, anchors))
    checks += review_checks(ledger, sha256, raw, events, _signature_check(keys, anchors))
    return checks + document_ledger_checks(ledger, events, indexed, record.packet_event)


def _concluded_checks(
    store: ObjectStore, ledger: Ledger, sha256: str, events: list[Event]
) -> list[Check]:
    """A rejected or quarantined document: its outcomes, kept source, index and events."""
    outcome = outcome_check(store, sha256, ledger.tenant, events)
    if outcome is None:
        return []
    index, indexed = index_check(ledger, sha256, set())
    checks = [outcome, index]
    source = ids.source_key(sha256, ledger.tenant)
    if store.exists(source):
        checks.append(content_check(store, "source.hash", source, sha256))
    return checks + [chain_check(ledger, sorted({e.seq for e in events} | indexed))]


def _versions(store: ObjectStore, sha256: str, tenant: str | None, seqs: list[int]) -> list[Check]:
    found = versions_check(store, sha256, tenant, seqs)
    return [found] if found else []


def published_documents(
    store: ObjectStore, tenant: str | None, *, all_tenants: bool = False
) -> list[tuple[str, str | None]]:
    """Every published document as (sha256, tenant), from its record's key alone: a
    record that no longer parses is still listed, and verifying it FAILs ``record.parse``."""
    folder = "records/" if all_tenants else f"records/{ids.scope(ids.check_tenant(tenant))}/"
    found = []
    for key in store.list(folder):
        scope, _, name = key.removeprefix("records/").partition("/")
        sha256 = name.removesuffix(".json")
        if _SHA.match(sha256):  # anything else under records/ is not a document's
            found.append((sha256, None if scope == ids.scope(None) else scope))
    return found


def verify_ledger(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    tenant: str | None,
    *,
    anchors: TrustAnchors,
    witness: ObjectStore | None = None,
    policy: WitnessPolicy | None = None,
) -> Report:
    """The tenant's whole log (``verify.audit``), with only trusted keys' checkpoints."""
    return verify_log(store, tenant, anchors.trusted(keys), witness, policy)
