"""Checks of one document's stored objects, each against something that pins it.

    record.canonical   the record's stored bytes are exactly RFC 8785 canonical JSON
    record.signature   a trusted key signed the record's exact stored bytes
    record.ledger      the ``published`` event names the SHA-256 of the stored record
    packet.hash        the evidence packet hashes to a ``validated`` event's packet_sha256
    packet.subject     the packet is this document's (hash, tenant, size, type)
    outcome.hash       each rejection/quarantine outcome hashes to its ledger event
    index.entries      every by-document index entry opens, is empty and names an event
    fields.index       every field read surely has its keyed field-index entry
                       (custody.field_index), present and opening to what publish wrote, so
                       a compliance search by that field still finds the document
    source.hash, text.checksum, pages.checksum, pdf.checksum
                       the content objects hash to what the signed record says

Every object is read: an object that no longer opens (a sealed object altered
under its seal) fails its check as surely as one whose hash differs. Details
carry keys, sequence numbers, hashes and codes only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

from custody import field_index, ids
from custody.canonical import is_canonical, signed_member
from custody.errors import StoreError
from custody.fields import Extraction
from custody.ledger.events import Event, Ledger, prefix
from custody.ledger.signing import Signature
from custody.models import EvidencePacket, OutcomeRecord, ResultRecord, SignedRecord
from custody.stores import ObjectMissing, ObjectStore
from starter.evidence.verify.report import Check, checked, failed

#: (body, signature, signing time) -> None when a trusted key signed it, else why not.
SignatureCheck = Callable[[bytes, Signature, datetime], str | None]


def read(store: ObjectStore, key: str) -> bytes | str:
    """The object's bytes, or why they cannot be had."""
    try:
        return store.get(key)
    except ObjectMissing:
        return "missing"
    except StoreError as err:  # a seal that no longer opens is tampering, not an outage
        return f"unreadable ({type(err).__name__})"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_checks(raw: bytes, signed: SignedRecord, check_sig: SignatureCheck) -> list[Check]:
    why = _signature_problem(raw, signed, check_sig)
    return [
        Check(name="record.canonical", ok=is_canonical(raw), detail=f"sha256 {sha(raw)[:16]}"),
        Check(name="record.signature", ok=why is None, detail=why or f"kid {signed.signature.kid}"),
    ]


def _signature_problem(raw: bytes, signed: SignedRecord, check_sig: SignatureCheck) -> str | None:
    """The signature over the record member's bytes exactly as stored, never re-serialised."""
    body = signed_member(raw, "record")
    if isinstance(body, str):
        return body
    sig = Signature(**signed.signature.model_dump())
    return check_sig(body, sig, signed.record.published_at)


def record_ledger_check(raw: bytes, events: list[Event]) -> Check:
    published = [e for e in events if e.kind == "published"]
    named = {str(e.detail.get("record_sha256")) for e in published}
    ok = sha(raw) in named
    detail = f"event {published[0].seq}" if published else "no published event"
    return Check(name="record.ledger", ok=ok, detail=detail if ok else f"{detail}: hash differs")


def packet_checks(store: ObjectStore, record: ResultRecord, events: list[Event]) -> list[Check]:
    key = ids.packet_key(record.sha256, record.tenant)
    raw = read(store, key)
    if isinstance(raw, str):
        return [failed("packet.hash", raw), failed("packet.subject", raw)]
    # Each validation run hashes the packet it meant to write; the first one created it.
    named = {e.detail.get("packet_sha256") for e in events if e.kind == "validated"}
    hash_check = Check(
        name="packet.hash",
        ok=sha(raw) in named,
        detail=f"sha256 {sha(raw)[:16]}" + ("" if sha(raw) in named else " not in the ledger"),
    )
    try:
        packet = EvidencePacket.model_validate_json(raw)
    except ValueError:
        return [hash_check, failed("packet.subject", "unreadable")]
    same = (packet.sha256, packet.tenant, packet.size_bytes, packet.media_type) == (
        record.sha256,
        record.tenant,
        record.size_bytes,
        record.media_type,
    )
    return [hash_check, Check(name="packet.subject", ok=same and is_canonical(raw))]


def outcome_check(
    store: ObjectStore, sha256: str, tenant: str | None, events: list[Event]
) -> Check | None:
    """Every outcome of the document against its ledger event; None when there is none."""
    keys = list(store.list(ids.outcome_prefix(sha256, tenant)))
    if not keys:
        return None
    problems = []
    for key in keys:
        raw = read(store, key)
        if isinstance(raw, str):
            problems.append(f"{key.rsplit('/', 1)[-1]} {raw}")
        elif not _outcome_matches(raw, sha256, tenant, events):
            problems.append(f"{key.rsplit('/', 1)[-1]} differs from the ledger")
    return checked("outcome.hash", problems, f"{len(keys)} outcome(s)")


def _outcome_matches(raw: bytes, sha256: str, tenant: str | None, events: list[Event]) -> bool:
    try:
        outcome = OutcomeRecord.model_validate_json(raw)
    except ValueError:
        return False
    if (outcome.sha256, outcome.tenant) != (sha256, tenant) or not is_canonical(raw):
        return False
    for e in events:
        if e.kind == outcome.state.value and e.run_id == outcome.run_id and e.code == outcome.code:
            # Outcomes concluded since their hash entered the ledger are pinned by it.
            pinned = e.detail.get("outcome_sha256")
            return pinned is None or pinned == sha(raw)
    return False


def index_check(ledger: Ledger, sha256: str, must_name: set[int]) -> tuple[Check, set[int]]:
    """Every index entry opens and names itself; those in ``must_name`` are all there."""
    folder = f"{prefix(ledger.tenant)}by-doc/{sha256}/"
    problems, seqs = [], set()
    for key in ledger.store.list(folder):
        name = key[len(folder) :]
        if not name.isdigit():
            problems.append(f"entry {name[:24]} is not a sequence number")
            continue
        seqs.add(int(name))
        raw = read(ledger.store, key)
        # Empty, or naming its own document and number (what custody.ledger writes).
        if isinstance(raw, str) or raw not in (b"", f"{sha256} {int(name)}".encode()):
            problems.append(f"entry {int(name)} {raw if isinstance(raw, str) else 'altered'}")
    problems += [f"event {s} not indexed" for s in sorted(must_name - seqs)]
    return checked("index.entries", problems, f"{len(seqs)} entries"), seqs


def content_check(store: ObjectStore, name: str, key: str, expected: str) -> Check:
    raw = read(store, key)
    if isinstance(raw, str):
        return failed(name, f"object {raw}")
    ok = sha(raw) == expected
    return Check(name=name, ok=ok, detail="" if ok else "hash differs")


def content_checks(store: ObjectStore, record: ResultRecord) -> list[Check]:
    checks = [
        content_check(store, "source.hash", record.source_key, record.sha256),
        content_check(store, "text.checksum", record.text_key, record.text_sha256),
    ]
    if record.pages_sha256:
        checks.append(content_check(store, "pages.checksum", record.pages_key, record.pages_sha256))
    if record.pdf_key is not None:  # "original": the source, checked again under this name
        checks.append(content_check(store, "pdf.checksum", record.pdf_key, record.pdf_sha256))
    if record.fields_key and record.fields_sha256:
        checks.append(
            content_check(store, "fields.checksum", record.fields_key, record.fields_sha256)
        )
    return checks


def field_index_check(store: ObjectStore, record: ResultRecord) -> Check | None:
    """The document's keyed field-index entries, from its signed fields (None: nothing indexed)."""
    if not record.fields_key or not record.fields_sha256:
        return None
    raw = read(store, record.fields_key)
    if isinstance(raw, str) or sha(raw) != record.fields_sha256:
        return None  # fields.checksum fails it; the index cannot be derived from altered fields
    try:
        extraction = Extraction.model_validate_json(raw)
    except ValueError:
        return failed("fields.index", "fields unreadable")
    wanted = field_index.expected(store, record.tenant, record.sha256, extraction)
    if wanted is None:
        return None  # no keyring: no index is written (plain development mode)
    problems = [f"{name} {why}" for name, keys in wanted.items() if (why := _entry(store, keys))]
    return checked("fields.index", problems, f"{len(wanted)} entries")


def _entry(store: ObjectStore, keys: list[str]) -> str | None:
    """Why no key of ``keys`` holds an entry as publish writes it (``{}``); None if one does."""
    present = [key for key in keys if store.exists(key)]
    if not present:
        return "missing"
    return None if any(read(store, key) == b"{}" for key in present) else "altered"
