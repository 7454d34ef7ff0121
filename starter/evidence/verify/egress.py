"""``custody egress verify``: a release's receipt replayed against the store and the ledger.

Each check is named, like ``starter.evidence.verify.document``'s, so a FAIL says exactly
what no longer holds:

    receipt.present        the signed receipt exists and parses
    receipt.canonical      its stored bytes are exactly RFC 8785 canonical JSON
    receipt.signature      its Ed25519 signature verifies, with a trusted key valid when
                           it signed, over the receipt member's bytes exactly as stored
    files.hash             every released file's stored bytes hash to the receipt
    packet.hash            the receipt's packet hash is that of its file list
    egress.event           the egress event sits at the receipt's seq with its hash,
                           names this release, and its bytes hash is the packet's
    receipt.event          the ledger's receipt event names this receipt's hash
    egress.before_receipt  the egress event precedes the receipt event
    policy.pinned          the policy pinned by hash is still stored and still hashes
    ledger.inclusion       the egress and receipt events are leaves of the newest checkpoint
                           (cosigned by the witness quorum when one is required)
    ledger.witness         (with a witness) the log holds what the witnesses last cosigned

Only hashes, names of released files, sequence numbers and codes appear in details.
"""

from __future__ import annotations

from collections.abc import Callable

from custody import egress as eg
from custody.canonical import is_canonical, signed_member
from custody.errors import Code, CustodyError
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import PublicKeyRecord, verify
from custody.state.egress import SignedReceipt, pinned_policy, sha256_bytes
from custody.stores import ObjectMissing, ObjectStore
from custody.stores.base import StoreError
from starter.evidence.verify.proofs import LogProofs
from starter.evidence.verify.report import Check, Report


def release_exists(store: ObjectStore, tenant: str | None, rid: str) -> bool:
    """Whether anything of this release is stored for this tenant (files, event, receipt)."""
    prefix = f"{eg.releases_prefix(tenant)}{eg.check_release_id(rid)}/"
    return any(True for _ in store.list(prefix))


#: Reads the C2PA manifest embedded in a released file: its hash, or None when absent.
_ManifestReader = Callable[[bytes, str], str | None]


def verify_release(
    store: ObjectStore,
    keys: dict[str, PublicKeyRecord],
    tenant: str | None,
    rid: str,
    manifest_of: _ManifestReader | None = None,
    proofs: LogProofs | None = None,
) -> Report:
    """Every check of one release; with ``manifest_of`` (the C2PA reader, which this light
    module does not import), also that each signed file still carries the manifest its
    receipt names. ``keys``: the trusted keys only; ``proofs`` holds the witnesses."""
    subject = eg.release_workflow_id(eg.check_release_id(rid))
    key = eg.receipt_key(tenant, rid)
    try:
        body = store.get(key)
        signed = SignedReceipt.model_validate_json(body)
    except (ObjectMissing, KeyError):
        return _report(subject, [Check(name="receipt.present", ok=False, detail="no receipt")])
    except (ValueError, StoreError):
        return _report(subject, [Check(name="receipt.present", ok=False, detail="unreadable")])
    receipt = signed.receipt
    ledger = Ledger(store, tenant)
    egress_event = ledger.find(receipt.egress_event_seq)
    receipt_event = _receipt_event(store, ledger, key)
    checks = [
        Check(name="receipt.present", ok=receipt.release_id == rid and receipt.tenant == tenant),
        *stored_receipt_checks(body, signed, keys),
        _files_check(store, tenant, rid, receipt.files),
        Check(name="packet.hash", ok=eg.packet_sha256(receipt.files) == receipt.packet_sha256),
        _egress_event_check(egress_event, receipt),
        _receipt_event_check(receipt_event, rid, sha256_bytes(body)),
        _order_check(egress_event, receipt_event),
        _policy_check(store, tenant, receipt),
        *(proofs or LogProofs()).checks(ledger, _seqs(receipt, receipt_event), keys),
    ]
    if manifest_of is not None:
        checks.append(_manifest_check(store, receipt, manifest_of))
    return _report(subject, checks)


def _seqs(receipt: eg.Receipt, receipt_event: Event | None) -> set[int]:
    """The release's events: its egress event, and its receipt event when found."""
    return {receipt.egress_event_seq} | ({receipt_event.seq} if receipt_event else set())


def stored_receipt_checks(
    raw: bytes, signed: SignedReceipt, keys: dict[str, PublicKeyRecord]
) -> list[Check]:
    """The stored receipt as Custody wrote it, and signed over its stored bytes.

    ``signed`` is what ``raw`` parses to; it is not re-serialised for the
    signature, since the model would drop an unknown member and forgive
    whitespace, member order and number formatting that the bytes carry.
    """
    body = signed_member(raw, "receipt")
    why = body if isinstance(body, str) else verify(body, signed.signature, keys)
    record = keys.get(signed.signature.kid)
    if why is None and record is not None and not record.valid_at(signed.receipt.signed_at):
        why = f"{Code.KEY_OUTSIDE_VALIDITY}: key {record.kid} was not valid when it signed"
    return [
        Check(
            name="receipt.canonical",
            ok=is_canonical(raw),
            detail=f"sha256 {sha256_bytes(raw)[:16]}",
        ),
        Check(
            name="receipt.signature", ok=why is None, detail=why or f"kid {signed.signature.kid}"
        ),
    ]


def _report(subject: str, checks: list[Check]) -> Report:
    return Report(subject=subject, ok=all(c.ok for c in checks), checks=checks)


def _files_check(
    store: ObjectStore, tenant: str | None, rid: str, files: list[eg.FileRef]
) -> Check:
    problems = []
    for ref in files:
        try:
            data = store.get(eg.release_file_key(tenant, rid, ref.name))
        except (ObjectMissing, KeyError):
            problems.append(f"{ref.name} missing")
            continue
        except StoreError:
            problems.append(f"{ref.name} unreadable")
            continue
        if sha256_bytes(data) != ref.sha256 or len(data) != ref.bytes:
            problems.append(f"{ref.name} hash differs")
    detail = "; ".join(problems) if problems else f"{len(files)} file(s)"
    return Check(name="files.hash", ok=bool(files) and not problems, detail=detail)


def _manifest_check(store: ObjectStore, receipt: eg.Receipt, read: _ManifestReader) -> Check:
    media = {f.name: f.media_type for f in receipt.files}
    problems = []
    for name, expected in sorted(receipt.manifest_sha256s.items()):
        try:
            data = store.get(eg.release_file_key(receipt.tenant, receipt.release_id, name))
            found = read(data, media.get(name, "application/pdf"))
        except (ObjectMissing, KeyError, StoreError):
            found = None
        except CustodyError as err:  # the manifest does not parse
            problems.append(f"{name} {err.code}")
            continue
        if found != expected:
            problems.append(f"{name} manifest differs" if found else f"{name} no manifest")
    detail = "; ".join(problems) or f"{len(receipt.manifest_sha256s)} manifest(s)"
    return Check(name="manifest.hash", ok=not problems, detail=detail)


def _egress_event_check(event: Event | None, receipt: eg.Receipt) -> Check:
    seq = receipt.egress_event_seq
    if event is None:
        return Check(name="egress.event", ok=False, detail=f"event {seq} missing or unreadable")
    problems = []
    if event.kind != eg.EGRESS_EVENT or event.detail.get("release_id") != receipt.release_id:
        problems.append("not this release's egress event")
    if event.hash != receipt.egress_event_hash or event.body_hash() != event.hash:
        problems.append("hash differs")
    if event.detail.get("bytes_sha256") != receipt.packet_sha256:
        problems.append("bytes hash is not the packet's")
    return Check(name="egress.event", ok=not problems, detail="; ".join(problems) or f"event {seq}")


def _receipt_event(store: ObjectStore, ledger: Ledger, key: str) -> Event | None:
    """The receipt's ledger event, found through the markers ``append_once`` left."""
    prefix = f"{key}.event/seq/"
    for marker in store.list(prefix):
        event = ledger.find(int(marker[len(prefix) :]))
        if event is not None and event.kind == eg.RECEIPT_EVENT:
            return event
    return None


def _receipt_event_check(event: Event | None, rid: str, receipt_sha256: str) -> Check:
    if event is None:
        return Check(name="receipt.event", ok=False, detail="no receipt event")
    ok = (
        event.detail.get("release_id") == rid
        and event.detail.get("receipt_sha256") == receipt_sha256
        and event.body_hash() == event.hash
    )
    detail = f"event {event.seq}" if ok else f"event {event.seq} names another receipt"
    return Check(name="receipt.event", ok=ok, detail=detail)


def _order_check(egress_event: Event | None, receipt_event: Event | None) -> Check:
    if egress_event is None or receipt_event is None:
        return Check(name="egress.before_receipt", ok=False, detail="an event is missing")
    ok = egress_event.seq < receipt_event.seq
    return Check(
        name="egress.before_receipt", ok=ok, detail=f"{egress_event.seq} < {receipt_event.seq}"
    )


def _policy_check(store: ObjectStore, tenant: str | None, receipt: eg.Receipt) -> Check:
    try:
        policy = pinned_policy(store, tenant, receipt.policy_sha256)
    except CustodyError as err:
        return Check(name="policy.pinned", ok=False, detail=str(err.code))
    except ValueError:
        return Check(name="policy.pinned", ok=False, detail="stored policy unreadable")
    ok = policy.name == receipt.policy
    return Check(name="policy.pinned", ok=ok, detail=f"{policy.name} {receipt.policy_sha256[:12]}")
