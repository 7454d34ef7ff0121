"""Verification is a replay, not a green dashboard.

For one document: fetch the stored source and recompute its hash, check the
record's signature, recompute the text, page and searchable-PDF checksums, and
check the ledger chain around the document's events. For the ledger: every event's hash,
every link, no gaps, every event in its place, and every signed checkpoint.
Each check is named, so a FAIL says exactly what does not hold.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel

from custody import ids
from custody.canonical import canonical_json
from custody.ledger import GENESIS, Checkpoint, Event, Ledger
from custody.models import SignedRecord
from custody.signing import PublicKeyRecord, Signature, verify
from custody.stores import ObjectMissing, ObjectStore


class Check(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class Report(BaseModel):
    subject: str
    ok: bool
    checks: list[Check]


def _report(subject: str, checks: list[Check]) -> Report:
    return Report(subject=subject, ok=all(c.ok for c in checks), checks=checks)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify_document(
    store: ObjectStore, keys: dict[str, PublicKeyRecord], sha256: str, tenant: str | None
) -> Report:
    subject = ids.workflow_id(sha256, tenant)
    try:
        signed = SignedRecord.model_validate_json(store.get(ids.record_key(sha256, tenant)))
    except ObjectMissing:
        return _report(
            subject, [Check(name="record.exists", ok=False, detail="no published record")]
        )
    except ValueError:
        return _report(subject, [Check(name="record.parse", ok=False, detail="record unreadable")])
    record = signed.record
    why = verify(canonical_json(record), Signature(**signed.signature.model_dump()), keys)
    checks = [
        Check(name="record.signature", ok=why is None, detail=why or f"kid {signed.signature.kid}"),
        Check(name="record.subject", ok=record.sha256 == sha256 and record.tenant == tenant),
        _object_check(store, "source.hash", record.source_key, sha256),
        _object_check(store, "text.checksum", record.text_key, record.text_sha256),
    ]
    if record.pages_sha256:
        checks.append(_object_check(store, "pages.checksum", record.pages_key, record.pages_sha256))
    if record.pdf_key is not None:  # "original": the source, checked again under this name
        checks.append(_object_check(store, "pdf.checksum", record.pdf_key, record.pdf_sha256))
    checks += _document_ledger_checks(store, keys, sha256, tenant, record.packet_event)
    return _report(subject, checks)


def _object_check(store: ObjectStore, name: str, key: str, expected: str) -> Check:
    try:
        actual = _sha(store.get(key))
    except ObjectMissing:
        return Check(name=name, ok=False, detail="object missing")
    return Check(
        name=name, ok=actual == expected, detail="" if actual == expected else "hash differs"
    )


def _document_ledger_checks(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    sha256: str,
    tenant: str | None,
    packet: object,
) -> list[Check]:
    ledger = Ledger(store, tenant)
    mine = ledger.for_document(sha256)
    checks = [Check(name="ledger.published", ok=any(e.kind == "published" for e in mine))]
    seq = getattr(packet, "seq", None)
    if seq is not None:
        try:
            found = ledger.get(seq)
            ok = found.hash == getattr(packet, "hash", None) and found.body_hash() == found.hash
        except ObjectMissing:
            ok = False
        checks.append(Check(name="ledger.packet", ok=ok, detail=f"event {seq}"))
    claimed = {e.seq for e in mine} | set(ledger.indexed_seqs(sha256)) | ({seq} if seq else set())
    checks.append(_document_chain_check(ledger, keys, sorted(claimed)))
    return checks


def _document_chain_check(
    ledger: Ledger, keys: dict[str, PublicKeyRecord], seqs: list[int]
) -> Check:
    """The document's events and their links to both neighbours, and the newest checkpoint.

    Reads a few events per document event, never the tenant's whole chain
    (``custody audit verify`` walks that).
    """
    problems: list[str] = []
    for seq in seqs:
        event = _fetch(ledger, seq)
        if event is None:
            if ledger.has(seq + 1):  # a hole in the chain, not a crashed append at the head
                problems.append(f"event {seq} missing")
            continue
        if isinstance(event, str):
            problems.append(event)
            continue
        before = _fetch(ledger, seq - 1) if seq > 1 else None
        problems += _event_problems(seq, event, before if isinstance(before, Event) else None)
        after = _fetch(ledger, seq + 1)
        if isinstance(after, Event) and after.prev != event.hash:
            problems.append(f"event {seq + 1} does not follow event {seq}")
    newest = ledger.newest_checkpoint()
    if newest is not None:
        problems += _one_checkpoint_problems(ledger, keys, newest)
    return Check(name="ledger.chain", ok=not problems, detail="; ".join(problems[:5]))


def _fetch(ledger: Ledger, seq: int) -> Event | str | None:
    """The event, None when absent, or a problem when it no longer reads as one."""
    try:
        return ledger.get(seq)
    except ObjectMissing:
        return None
    except ValueError:
        return f"event {seq} altered (unreadable)"


def _one_checkpoint_problems(
    ledger: Ledger, keys: dict[str, PublicKeyRecord], cp: Checkpoint
) -> list[str]:
    if cp.signature is None or verify(cp.body(), cp.signature, keys) is not None:
        return [f"checkpoint {cp.seq} signature invalid"]
    if cp.seq == 0:
        return []
    event = _fetch(ledger, cp.seq)
    if event is None:
        return [f"checkpoint {cp.seq} beyond head (truncated)"]
    if not isinstance(event, Event) or event.hash != cp.hash:
        return [f"checkpoint {cp.seq} disagrees with the chain"]
    return []


def verify_ledger(
    store: ObjectStore, keys: dict[str, PublicKeyRecord], tenant: str | None
) -> Report:
    ledger = Ledger(store, tenant)
    return _report(f"ledger/{ids.scope(tenant)}", [_chain_check(ledger, keys)])


def _chain_check(ledger: Ledger, keys: dict[str, PublicKeyRecord]) -> Check:
    """Every event of the tenant's chain, its links, gaps and the signed checkpoints."""
    seqs = ledger.sequence_numbers()
    problems = _gaps(seqs)
    prev: Event | None = None
    for seq in seqs:
        event = ledger.find(seq)
        if event is None:
            problems.append(f"event {seq} altered (unreadable)")
        else:
            problems += _event_problems(seq, event, prev)
        prev = event
    problems += _checkpoint_problems(ledger, keys, seqs)
    return Check(name="ledger.chain", ok=not problems, detail="; ".join(problems[:5]))


def _gaps(seqs: list[int]) -> list[str]:
    present = set(seqs)
    missing = [s for s in range(1, max(seqs, default=0) + 1) if s not in present]
    return [f"event {s} missing" for s in missing]


def _event_problems(seq: int, event: Event, prev: Event | None) -> list[str]:
    problems = []
    if event.seq != seq:
        problems.append(f"event {seq} holds seq {event.seq} (moved)")
    if event.body_hash() != event.hash:
        problems.append(f"event {seq} altered")
    expected_prev = GENESIS if seq == 1 else (prev.hash if prev and prev.seq == seq - 1 else None)
    if expected_prev is not None and event.prev != expected_prev:
        problems.append(f"event {seq} does not follow event {seq - 1}")
    return problems


def _checkpoint_problems(
    ledger: Ledger, keys: dict[str, PublicKeyRecord], seqs: list[int]
) -> list[str]:
    problems = []
    top = max(seqs, default=0)
    for cp in ledger.checkpoints():
        if cp.signature is None or verify(cp.body(), cp.signature, keys) is not None:
            problems.append(f"checkpoint {cp.seq} signature invalid")
        elif cp.seq > top:
            problems.append(f"checkpoint {cp.seq} beyond head {top} (truncated)")
        elif (
            cp.seq > 0 and cp.seq in seqs and getattr(ledger.find(cp.seq), "hash", None) != cp.hash
        ):
            problems.append(f"checkpoint {cp.seq} disagrees with the chain")
    return problems
