"""Evidence for compliance staff: verify, bundles, quarantine decisions, search.

Everything here reads the object store, not Temporal, so it works long after
Temporal has forgotten a run. Operator actions and verifications are appended
to the audit ledger; free-text reasons are stored as decision objects and only
their hash enters the ledger.
"""

from __future__ import annotations

import hashlib
import io
import random
import zipfile
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from custody import ids
from custody.canonical import canonical_json
from custody.egress import EgressKind, releases_prefix
from custody.egress_store import SignedReceipt, hand_out
from custody.ledger import Ledger
from custody.models import OutcomeRecord, SignedRecord
from custody.signing import PublicKeyRecord, public_keys
from custody.stores import ObjectStore
from custody.verification import Report, verify_document


class DocumentRef(BaseModel):
    sha256: str
    tenant: str | None
    state: str
    code: str | None = None
    source_id: str | None = None
    at: datetime
    run_id: str


def verify_and_record(store: ObjectStore, sha256: str, tenant: str | None, actor: str) -> Report:
    report = verify_document(store, public_keys(store), sha256, tenant)
    failed = ",".join(c.name for c in report.checks if not c.ok)
    Ledger(store, tenant).append(
        "verified",
        sha256=sha256,
        code=None if report.ok else "VERIFY_FAILED",
        actor=actor,
        detail={"outcome": "PASS" if report.ok else "FAIL", "failed": failed or None},
    )
    return report


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


def export_bundle(
    store: ObjectStore, sha256: str, tenant: str | None, out: Path, *, actor: str
) -> Path:
    """A zip an auditor can check with verify_bundle.py alone (see VERIFY.md inside)."""
    record_bytes = store.get(ids.record_key(sha256, tenant))
    signed = SignedRecord.model_validate_json(record_bytes)
    record = signed.record
    ledger = Ledger(store, tenant)
    mine = [e.seq for e in ledger.for_document(sha256)]
    lo, hi = min(mine, default=1), max(mine, default=1)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("source.bin", store.get(record.source_key))
        z.writestr("text.txt", store.get(record.text_key))
        z.writestr("pages.json", store.get(record.pages_key))
        if record.searchable == "built" and record.pdf_key:
            z.writestr("searchable.pdf", store.get(record.pdf_key))
        z.writestr("record.json", record_bytes)
        z.writestr("packet.json", store.get(ids.packet_key(sha256, tenant)))
        keys = public_keys(store)
        z.writestr("public_key.json", canonical_json(keys[signed.signature.kid]))
        _add_receipts(z, store, sha256, tenant, keys, signed.signature.kid)
        for seq in range(lo, hi + 1):
            z.writestr(f"ledger/{seq:012d}.json", canonical_json(ledger.get(seq)))
        z.writestr("verify_bundle.py", _verifier_source())
        z.writestr("VERIFY.md", _VERIFY_MD.format(sha256=sha256, lo=lo, hi=hi))
    # The bundle carries the source and its text: it leaves only once the egress event is in.
    out.write_bytes(
        hand_out(store, tenant, EgressKind.EXPORT, buf.getvalue(), actor=actor, documents=[sha256])
    )
    return out


def _add_receipts(
    z: zipfile.ZipFile,
    store: ObjectStore,
    sha256: str,
    tenant: str | None,
    keys: dict[str, PublicKeyRecord],
    record_kid: str,
) -> None:
    """Every signed receipt of a release of the document, and the keys that verify them.

    Only the tenant's releases are listed, and of their objects only receipts are read.
    """
    kids = {record_kid}
    for key in store.list(releases_prefix(tenant)):
        if not key.endswith("/receipt.json"):
            continue
        body = store.get(key)
        signed = SignedReceipt.model_validate_json(body)
        if sha256 in signed.receipt.sources:
            z.writestr(f"receipts/{signed.receipt.release_id}.json", body)
            kids.add(signed.signature.kid)
    for kid in sorted(kids & keys.keys()):  # a receipt may be signed by a newer key
        z.writestr(f"keys/{kid}.json", canonical_json(keys[kid]))


def _verifier_source() -> str:
    return resources.files("starter.evidence").joinpath("verify_bundle.py").read_text()


def decide(
    store: ObjectStore, sha256: str, tenant: str | None, action: str, actor: str, reason: str
) -> str:
    """Record an operator's decision on a quarantined document; returns the decision key."""
    at = datetime.now(UTC)
    key = f"decisions/{ids.scope(tenant)}/{sha256}/{at:%Y%m%dT%H%M%S%fZ}-{action}.json"
    body = {
        "sha256": sha256,
        "tenant": tenant,
        "action": action,
        "by": actor,
        "reason": reason,
        "at": at.isoformat(),
    }
    store.create(key, canonical_json(body))
    reason_hash = hashlib.sha256(reason.encode()).hexdigest()
    Ledger(store, tenant).append(
        f"quarantine_{action}",
        sha256=sha256,
        actor=actor,
        detail={"reason_sha256": reason_hash, "decision": key},
    )
    return key


def final_decision(store: ObjectStore, sha256: str, tenant: str | None) -> str | None:
    keys = list(store.list(f"decisions/{ids.scope(tenant)}/{sha256}/"))
    return keys[-1].rsplit("-", 1)[-1].removesuffix(".json") if keys else None


_VERIFY_MD = """# Verifying this evidence bundle

Document SHA-256: `{sha256}`; ledger events {lo}..{hi} of its tenant's chain.

Needs Python 3 and the `cryptography` package; nothing from Custody.

    unzip bundle.zip -d bundle && python bundle/verify_bundle.py bundle

It prints PASS or FAIL for each check and exits 0 only if all pass:

- `source.hash`: sha256(source.bin) is the record's `sha256`: these are the bytes that were OCR'd.
- `record.signature`: record.json's Ed25519 signature over the canonical JSON of `record`
  (keys sorted, separators `,` `:`, UTF-8) verifies with public_key.json (same `kid`).
- `text.checksum`, `pages.checksum`: sha256(text.txt), sha256(pages.json) match the record.
- `pdf.checksum` (records with a searchable PDF): sha256(searchable.pdf), the page images
  with the recognised text invisible over them, matches the record's `pdf_sha256`; for a
  born-digital PDF read from its own text layer (`searchable` "original") the record names
  source.bin itself, so `pdf_sha256` must equal `sha256`.
- `ledger.chain`: each event's `hash` is sha256 of its canonical JSON without `hash`, each
  follows the one before (`seq` + 1, `prev` = previous `hash`), the record's
  `packet_event` is among them, and a `published` event names sha256(record.json).

- `receipt.signature:<release id>`, `receipt.sources:<release id>` (one pair per file in
  receipts/, each a signed receipt of a release of this document): the Ed25519 signature over
  the canonical JSON of `receipt` verifies with keys/<kid>.json for the `kid` it names (a
  receipt may be signed by a newer key than the record), and the document's sha256 is among
  the receipt's `sources`.

To check the public keys themselves, compare public_key.json and keys/ with the keys Custody
publishes under `keys/signing/<kid>.json` in the evidence store, or with your own copy.
"""
