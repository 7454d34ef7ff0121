"""Checks of a document's reviews, part of ``custody verify``: the derived versions.

    review.signature    a trusted key signed the derived version as stored (canonical)
    review.decision     the reviewer's decision verifies with their own key, and the
                        identity held the reviewer role when they decided
    review.subject      the decision is this document's, with the version's verdict and
                        corrections
    review.record       the version names the SHA-256 of the evidence record's stored
                        bytes (approved documents): the record was never rewritten
    review.corrections  the sealed corrections hash to what the decision signed
    review.ledger       a ``reviewed`` event names the version's stored bytes' hash

Read as JSON (the activities' models are not imported by the auditor's side).
Details: keys, hashes, names of identities; never a value.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from custody import ids
from custody.canonical import canonical_json, is_canonical, loads
from custody.errors import IdentityRefused
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signature
from custody.operators import SignedDecision, check_decision
from custody.reviews import REVIEWED
from starter.evidence.verify.objects import SignatureCheck, read, sha
from starter.evidence.verify.report import Check, checked, failed


def review_checks(
    ledger: Ledger,
    sha256: str,
    record_raw: bytes | None,
    events: list[Event],
    check_sig: SignatureCheck,
) -> list[Check]:
    """The checks of every derived version of the document; none when it was never reviewed."""
    store = ledger.raw
    prefix = f"results/{ids.scope(ledger.tenant)}/{sha256}/review-"
    checks = []
    for key in sorted(store.list(prefix)):
        checks += _checks(ledger, key, sha256, record_raw, events, check_sig)
    return checks


def _checks(
    ledger: Ledger,
    key: str,
    sha256: str,
    record_raw: bytes | None,
    events: list[Event],
    check_sig: SignatureCheck,
) -> list[Check]:
    raw = read(ledger.raw, key)
    if isinstance(raw, str):
        return [failed("review.signature", f"{key}: {raw}")]
    try:
        body: dict[str, Any] = loads(raw)["review"]
        signature = Signature.model_validate(loads(raw)["signature"])
        decision = SignedDecision.model_validate(body["decision"])
    except (ValueError, KeyError, TypeError):
        return [failed("review.signature", f"{key}: not a derived version")]
    at = datetime.fromisoformat(str(body.get("reviewed_at")))
    why = check_sig(canonical_json(body), signature, at) if is_canonical(raw) else "not canonical"
    return [
        Check(name="review.signature", ok=why is None, detail=why or f"kid {signature.kid}"),
        _decision(ledger, decision),
        _subject(body, decision, sha256, ledger.tenant),
        _record(body, record_raw),
        _corrections(ledger, body),
        _event(events, sha(raw)),
    ]


def _decision(ledger: Ledger, decision: SignedDecision) -> Check:
    try:
        who = check_decision(ledger.raw, decision)
    except IdentityRefused as err:
        return failed("review.decision", f"{err.code}: {err.detail}")
    return Check(name="review.decision", ok=True, detail=f"by {who.name}, kid {who.kid}")


def _subject(
    body: dict[str, Any], decision: SignedDecision, sha256: str, tenant: str | None
) -> Check:
    s = decision.subject
    problems = []
    if (s.get("sha256"), s.get("tenant")) != (sha256, tenant):
        problems.append("the decision is another document's")
    if s.get("verdict") != body.get("verdict") or s.get("reject_code") != body.get("code"):
        problems.append("the verdict is not the one signed")
    if s.get("corrections_sha256") != body.get("corrections_sha256"):
        problems.append("the corrections are not the ones signed")
    if decision.by != body.get("reviewed_by"):
        problems.append("names another reviewer than signed")
    return checked("review.subject", problems, f"{body.get('verdict')} by {decision.by}")


def _record(body: dict[str, Any], record_raw: bytes | None) -> Check:
    named = body.get("record_sha256")
    if body.get("verdict") != "approve":
        return Check(name="review.record", ok=named is None, detail="rejected: no record")
    if record_raw is None:
        return failed("review.record", "approved, and no record")
    ok = named == sha(record_raw)
    return Check(name="review.record", ok=ok, detail=f"record sha256 {str(named)[:16]}")


def _corrections(ledger: Ledger, body: dict[str, Any]) -> Check:
    key = body.get("corrections_key")
    if key is None:
        return Check(name="review.corrections", ok=True, detail="none")
    raw = read(ledger.raw, str(key))
    if isinstance(raw, str):
        return failed("review.corrections", f"{key}: {raw}")
    ok = sha(raw) == body.get("corrections_sha256")
    n = len(body.get("fields", [])) + len(body.get("lines", []))
    return Check(name="review.corrections", ok=ok, detail=f"{n} corrected, sha256 {sha(raw)[:16]}")


def _event(events: list[Event], digest: str) -> Check:
    found = [e for e in events if e.kind == REVIEWED and e.detail.get("review_sha256") == digest]
    return Check(
        name="review.ledger",
        ok=bool(found),
        detail=f"event {found[0].seq}" if found else "no event",
    )
