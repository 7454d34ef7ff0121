"""The receipts of releases that carried a document, replayed as part of its verification.

Each release found in the tenant's egress index whose event names the document
and which got as far as a receipt (the receipt, or its ledger markers, exist)
is checked with ``custody egress verify``'s checks, named ``release.<check>``
(``release.files.hash``, ``release.receipt.signature`` ...), detail prefixed
with the release id. The receipt is checked as stored, never re-serialised:
``release.receipt.canonical`` holds when its bytes are exactly RFC 8785
canonical JSON, and ``release.receipt.signature`` is over the stored bytes of
its ``receipt`` member, so whitespace, member order, number formatting or a
member the model would drop all FAIL. A receipt deleted after its ledger event
was written is ``release.receipt.present`` failing, not a release that never
happened.
"""

from __future__ import annotations

from custody import egress as eg
from custody.ledger.signing import PublicKeyRecord
from custody.state.egress import egress_events
from custody.stores import ObjectStore
from starter.evidence.verify.egress import verify_release
from starter.evidence.verify.report import Check


def _releases_of(store: ObjectStore, sha256: str, tenant: str | None) -> list[str]:
    """Release ids whose egress event names the document and that reached a receipt."""
    found = []
    for event in egress_events(store, tenant):
        rid = event.release_id
        if rid is None or sha256 not in event.documents or rid in found:
            continue
        if any(True for _ in store.list(eg.receipt_key(tenant, rid))):
            found.append(rid)
    return found


def receipt_checks(
    store: ObjectStore, keys: dict[str, PublicKeyRecord], sha256: str, tenant: str | None
) -> list[Check]:
    """``keys``: the trusted keys only (``TrustAnchors.trusted``)."""
    checks = []
    for rid in _releases_of(store, sha256, tenant):
        for c in verify_release(store, keys, tenant, rid).checks:
            if c.name.startswith("ledger."):  # the whole log is ``custody audit verify``'s
                continue
            detail = f"release {rid[:12]}" + (f": {c.detail}" if c.detail else "")
            checks.append(Check(name=f"release.{c.name}", ok=c.ok, detail=detail))
    return checks
