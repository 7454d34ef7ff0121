"""The redacted view's signed record: what was removed from which evidence record, and by whom.

The view is a derived artifact beside the evidence, never a change to it: its
record names the evidence record by key and by the SHA-256 of its stored
bytes, holds the redaction map (page, box, reason, field or detector, who
approved; never the removed text), the policy's hash, the view PDF's hash
and the leak check's figures, and the ledger event that records it; it is
signed with the same Ed25519 keys as evidence records. The objects are
created once under ``redactions/<tenant>/<sha256>/<policy hash>.{pdf,txt,json}``
(``custody.redactions``); ``custody verify`` checks them
(``starter.evidence.verify.redactions``).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from custody.canonical import canonical_json
from custody.ledger.signing import PublicKeyRecord, Signature, Signer, verify
from custody.models import EventRef
from custody.stores import ObjectStore

#: 2: the view names its ``redaction_created`` ledger event.
VIEW_SCHEMA_VERSION = 2


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RedactionEntry(_Model):
    page: int  # 0-based, as in the record's pages
    box: list[int]  # [x0, y0, x1, y1] in the page's pixels at ``dpi``
    reason: str  # "field", "detector" or "sweep"
    source: str  # the field's or detector's name
    approved_by: str


class ViewCheck(_Model):
    engine: str
    engine_version: str
    pages: int
    strings: int
    leaks: int


class RedactionView(_Model):
    schema_version: int = VIEW_SCHEMA_VERSION
    sha256: str
    tenant: str | None
    record_key: str
    record_sha256: str
    policy: str
    policy_sha256: str
    dpi: int
    pdf_key: str
    pdf_sha256: str
    #: The kept words' text, what a release of the view includes as text.
    text_key: str
    text_sha256: str
    entries: list[RedactionEntry]
    check: ViewCheck
    approved_by: str
    created_at: datetime
    #: The ledger event that records the view (custody.redactions); None before version 2.
    event: EventRef | None = None


class SignedView(_Model):
    view: RedactionView
    signature: Signature

    @classmethod
    def sign(cls, view: RedactionView, signer: Signer) -> SignedView:
        return cls(view=view, signature=signer.sign(canonical_json(view)))

    def canonical(self) -> bytes:
        return canonical_json(self)


def view_problems(
    store: ObjectStore, signed: SignedView, keys: dict[str, PublicKeyRecord]
) -> list[str]:
    """Why the view does not verify (empty: it does): signature, record link, PDF hash."""
    problems = []
    why = verify(canonical_json(signed.view), signed.signature, keys)
    if why is not None:
        problems.append(f"signature: {why}")
    view = signed.view
    if _sha(store, view.record_key) != view.record_sha256:
        problems.append("the evidence record is not the one the view was made from")
    if _sha(store, view.pdf_key) != view.pdf_sha256:
        problems.append("the view's PDF does not hash to its record")
    if _sha(store, view.text_key) != view.text_sha256:
        problems.append("the view's text does not hash to its record")
    return problems


def _sha(store: ObjectStore, key: str) -> str | None:
    return hashlib.sha256(store.get(key)).hexdigest() if store.exists(key) else None
