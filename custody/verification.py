"""Verification is a replay, not a green dashboard.

For one document every stored object that belongs to it is read and checked
against what pins it (``custody.verify_objects`` lists the checks): the signed
record's exact stored bytes under a key trusted outside the store
(``custody.trust``), the evidence packet, the source, text, pages and
searchable PDF, its outcomes, its by-document index entries, the receipts of
releases that carried it, the ledger chain around its events and, on a
versioned bucket, every object's version history. The tenant's whole log (its
Merkle tree, signed checkpoints and witness) is ``verify_ledger``, which
``custody.ledger_audit`` answers. Each check is named, so a FAIL says exactly
what does not hold.
"""

from __future__ import annotations

from datetime import datetime

from custody import ids
from custody.ledger import Event, Ledger
from custody.ledger_audit import verify_log
from custody.ledger_checks import chain_check, document_ledger_checks
from custody.models import SignedRecord
from custody.signing import PublicKeyRecord, Signature, verify
from custody.stores import ObjectStore
from custody.trust import TrustAnchors
from custody.verify_objects import (
    SignatureCheck,
    content_check,
    content_checks,
    index_check,
    outcome_check,
    packet_checks,
    read,
    record_checks,
    record_ledger_check,
)
from custody.verify_receipts import receipt_checks
from custody.verify_report import Check, Report, failed
from custody.verify_report import report as _report
from custody.verify_versions import versions_check

__all__ = ["Check", "Report", "verify_document", "verify_ledger"]


def _signature_check(
    keys: dict[str, PublicKeyRecord], anchors: TrustAnchors | None
) -> SignatureCheck:
    """Trusted keys only; with no anchors, every key of ``keys`` (a caller that pinned them)."""

    def check(body: bytes, sig: Signature, at: datetime) -> str | None:
        if anchors is None:
            return verify(body, sig, keys)
        return anchors.verify(body, sig, keys, at=at)

    return check


def verify_document(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    sha256: str,
    tenant: str | None,
    *,
    anchors: TrustAnchors | None = None,
) -> Report:
    """Every check of one document. ``keys`` is where signers' public keys are found
    (the store's ``public_keys``); ``anchors`` decides which of them are trusted."""
    subject = ids.workflow_id(sha256, tenant)
    ledger = Ledger(store, tenant)
    events = ledger.for_document(sha256)
    raw = read(store, ids.record_key(sha256, tenant))
    if isinstance(raw, str):
        checks = _concluded_checks(store, ledger, sha256, events) or [
            failed("record.exists", f"record {raw}")
        ]
    else:
        checks = _published_checks(store, keys, anchors, ledger, raw, sha256, events)
    seqs = {e.seq for e in events} | set(ledger.indexed_seqs(sha256))
    return _report(subject, checks + _versions(store, sha256, tenant, sorted(seqs)))


def _published_checks(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    anchors: TrustAnchors | None,
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
    receipt_keys = keys if anchors is None else anchors.trusted(keys)
    checks += receipt_checks(store, receipt_keys, sha256, tenant)
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


def verify_ledger(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    tenant: str | None,
    *,
    anchors: TrustAnchors | None = None,
) -> Report:
    """The tenant's whole log (custody.ledger_audit), with only trusted keys' checkpoints."""
    return verify_log(store, tenant, keys if anchors is None else anchors.trusted(keys))
