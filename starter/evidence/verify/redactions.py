"""Checks of a document's redacted views, part of ``custody verify``.

    redaction.signature   a trusted key signed the view's record as stored
    redaction.record      the view names this document and the SHA-256 of its evidence
                          record's stored bytes (the evidence the view was made from)
    redaction.pdf.hash    the view's PDF hashes to its signed record
    redaction.text.hash   the view's text hashes to its signed record
    redaction.ledger      the ``redaction_created`` event the record names is in the
                          ledger, unaltered, and names the view's hashes and policy
    redaction.present     every ``redaction_created`` event of the document has its view

The records are read as JSON, not through the service's model
(``activities.redact.view``): the core never imports activities, and a
field added later must not make an older view unreadable. A stored record
must be exactly RFC 8785 canonical JSON, so its ``view`` member re-encoded
is that member's stored bytes, which is what was signed (the member sorts
after ``signature``, so it cannot be cut out first as records' are). Views
made before records named their event (schema 1) pass ``redaction.ledger``
with that said. Details: keys, hashes, sequence numbers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from custody.canonical import canonical_json, is_canonical, loads
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signature
from custody.redactions import REDACTION_EVENT, view_prefix
from starter.evidence.verify.objects import SignatureCheck, read, sha
from starter.evidence.verify.report import Check, checked, failed


def redaction_checks(
    ledger: Ledger, sha256: str, record_raw: bytes, events: list[Event], check_sig: SignatureCheck
) -> list[Check]:
    """The checks of every view of the document; none when it has none and no event says so."""
    store, tenant = ledger.raw, ledger.tenant
    keys = [k for k in store.list(view_prefix(sha256, tenant)) if k.endswith(".json")]
    checks = []
    for key in sorted(keys):
        checks += _view_checks(ledger, key, sha256, record_raw, check_sig)
    made = [e for e in events if e.kind == REDACTION_EVENT]
    if made:
        missing = [
            f"event {e.seq}: view missing"
            for e in made
            if str(e.detail.get("view_key")) not in keys
        ]
        checks.append(checked("redaction.present", missing, f"{len(made)} view(s)"))
    return checks


def _view_checks(
    ledger: Ledger, key: str, sha256: str, record_raw: bytes, check_sig: SignatureCheck
) -> list[Check]:
    names = ("signature", "record", "pdf.hash", "text.hash", "ledger")
    label = f"view {key.rsplit('/', 1)[-1][:12]}"
    raw = read(ledger.raw, key)
    try:
        if isinstance(raw, str):
            raise ValueError(raw)
        signed = loads(raw)
        view: dict[str, Any] = signed["view"]
        signature = Signature.model_validate(signed["signature"])
        at = datetime.fromisoformat(view["created_at"])
    except (ValueError, KeyError, TypeError) as err:
        why = raw if isinstance(raw, str) else f"unreadable ({type(err).__name__})"
        return [failed(f"redaction.{n}", f"{label}: {why}") for n in names]
    # Canonical as stored, so the member re-encoded is its stored bytes: nothing hides
    # in whitespace, member order or number forms that the signature does not cover.
    unsigned = (
        check_sig(canonical_json(view), signature, at)
        if is_canonical(raw)
        else "record not canonical (not written by Custody)"
    )
    linked = view.get("sha256") == sha256 and view.get("record_sha256") == sha(record_raw)
    return [
        Check(
            name="redaction.signature",
            ok=unsigned is None,
            detail=f"{label}: {unsigned or 'kid ' + signature.kid}",
        ),
        Check(name="redaction.record", ok=linked, detail=label if linked else f"{label}: differs"),
        _hash_check(ledger, "redaction.pdf.hash", label, view, "pdf"),
        _hash_check(ledger, "redaction.text.hash", label, view, "text"),
        _ledger_check(ledger, label, key, view),
    ]


def _hash_check(ledger: Ledger, name: str, label: str, view: dict[str, Any], part: str) -> Check:
    raw = read(ledger.raw, str(view.get(f"{part}_key")))
    if isinstance(raw, str):
        return failed(name, f"{label}: object {raw}")
    ok = sha(raw) == view.get(f"{part}_sha256")
    return Check(name=name, ok=ok, detail=label if ok else f"{label}: hash differs")


def _ledger_check(ledger: Ledger, label: str, key: str, view: dict[str, Any]) -> Check:
    ref = view.get("event")
    if not isinstance(ref, dict):
        ok = view.get("schema_version") == 1  # made before views named their event
        return Check(name="redaction.ledger", ok=ok, detail=f"{label}: names no event")
    event = ledger.find(int(ref.get("seq", 0)))
    if event is None:
        return failed("redaction.ledger", f"{label}: event {ref.get('seq')} missing")
    expected = {
        "view_key": key,
        "view_sha256": view.get("pdf_sha256"),
        "policy_sha256": view.get("policy_sha256"),
    }
    problems = [] if event.hash == ref.get("hash") == event.body_hash() else ["event altered"]
    if event.kind != REDACTION_EVENT or event.sha256 != view.get("sha256"):
        problems.append("event is another's")
    problems += [f"{k} differs" for k, v in expected.items() if event.detail.get(k) != v]
    return checked("redaction.ledger", problems, f"{label}: event {event.seq}")
