"""A reviewer's decision, checked and then kept as a signed version derived from the evidence.

``accept`` runs inside the review workflow's update handler, before the
decision takes effect: the decision must be signed by a registered identity
with the ``reviewer`` role, valid now (``custody.operators.check_decision``),
for this document, and its sealed corrections must be the ones it names
(signed reference, hash) and name fields and lines the document has. Any
refusal is final for that decision (``OPERATOR_REVOKED``, ``DECISION_INVALID``
...): the update fails and the document stays in review, unchanged.

``record`` runs once the document is published (approve) or concluded
(reject): the derived version ``results/<tenant>/<sha256>/review-<decision>.json``
names the reviewer, carries their signed decision, the hash of every original
value or line corrected and of its replacement, the hash of the evidence
record, and is signed by the worker's key; a ``reviewed`` ledger event names
it. The evidence record is never rewritten. Created once per decision: a
retry, or a worker killed halfway, finds it and appends no second event.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from temporalio import activity

from activities.audit import record as record_event
from activities.decisions import decider, parse, refused
from activities.faults import coded
from activities.output import load_pages
from custody.canonical import canonical_json
from custody.errors import Code
from custody.fields import Extraction
from custody.ledger.checkpoints import checkpoint
from custody.ledger.events import Ledger
from custody.ledger.signing import Signer
from custody.models import PageText, ResultRecord, SignedRecord
from custody.operators import SignedDecision
from custody.refs import RefKeys
from custody.reviews import (
    REVIEW_OVERDUE,
    REVIEWED,
    Accepted,
    OverdueInput,
    OverdueResult,
    RecordReviewInput,
    RecordReviewResult,
    review_key,
)
from custody.stores import ObjectStore


def value_sha256(value: object) -> str:
    """The hash a derived version records for a field's value (canonical JSON of it)."""
    return hashlib.sha256(canonical_json({"value": value})).hexdigest()


def line_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReviewActivities:
    def __init__(self, store: ObjectStore, signer: Signer) -> None:
        self._store, self._signer = store, signer
        self._refs = RefKeys.for_store(store)

    @activity.defn(name="custody.review_accept")
    @coded(Code.STORE_UNAVAILABLE)
    def accept(self, inp: RecordReviewInput) -> Accepted:
        decision = _decision(inp)
        identity = decider(self._store, decision)  # a refusal: final, the document stays in review
        self._corrections(inp, decision)
        attempt = activity.info().attempt
        return Accepted(
            reviewed_by=identity.name, decision_sha256=decision.sha256(), attempt=attempt
        )

    @activity.defn(name="custody.review_record")
    @coded(Code.STORE_UNAVAILABLE)
    def record(self, inp: RecordReviewInput) -> RecordReviewResult:
        decision = _decision(inp)
        key = review_key(inp.sha256, inp.tenant, decision.sha256())
        attempt = activity.info().attempt
        created = False
        if not self._store.exists(key):
            created = self._store.create(key, canonical_json(self._derived(inp, decision)))
        stored = self._store.get(key)  # a twin attempt may have written it first
        digest = hashlib.sha256(stored).hexdigest()
        event = record_event(
            self._store, inp.tenant, REVIEWED, inp.sha256, code=inp.decision.reject_code,
            review=key, review_sha256=digest, decision_sha256=decision.sha256(),
            verdict=inp.decision.verdict, actor=inp.reviewed_by,
        )  # fmt: skip
        checkpoint(Ledger(self._store, inp.tenant), self._signer, head=event)
        return RecordReviewResult(
            review_key=key, review_sha256=digest, created=created, attempt=attempt
        )

    @activity.defn(name="custody.review_overdue")
    @coded(Code.STORE_UNAVAILABLE)
    def overdue(self, inp: OverdueInput) -> OverdueResult:
        """The escalation: a ledger event anyone auditing the queue sees (codes only)."""
        record_event(
            self._store, inp.tenant, REVIEW_OVERDUE, inp.sha256,
            reasons=",".join(inp.reasons), waited_s=round(inp.waited_s),
        )  # fmt: skip
        return OverdueResult(attempt=activity.info().attempt)

    def _corrections(self, inp: RecordReviewInput, decision: SignedDecision) -> dict[str, Any]:
        """The sealed corrections the decision names, checked against the document."""
        d, subject = inp.decision, decision.subject
        if d.corrections_key is None:
            if d.fields or d.lines:
                raise refused(Code.DECISION_INVALID, "corrections named but none sealed")
            return {}
        self._refs.check(d.corrections_key, inp.tenant, inp.sha256, d.corrections_sig)
        raw = self._store.get(d.corrections_key)
        if hashlib.sha256(raw).hexdigest() != subject.get("corrections_sha256"):
            raise refused(Code.DECISION_INVALID, "the corrections are not the ones signed")
        data: dict[str, Any] = json.loads(raw)
        fields = sorted(data.get("fields", {}))
        lines = sorted((int(x["page"]), int(x["line"])) for x in data.get("lines", []))
        if fields != sorted(d.fields) or lines != sorted(d.lines):
            raise refused(Code.DECISION_INVALID, "the corrections do not match the decision")
        self._known(inp, fields, lines)
        return data

    def _known(
        self, inp: RecordReviewInput, fields: list[str], lines: list[tuple[int, int]]
    ) -> None:
        """Every corrected field is one the document's type has; every line is on its page."""
        if fields:
            names = set(self._extraction(inp).fields)
            unknown = sorted(set(fields) - names)
            if unknown:
                raise refused(Code.DECISION_INVALID, f"no field {', '.join(unknown)}")
        pages = self._pages(inp) if lines else []
        for page, line in lines:
            if not 1 <= page <= len(pages) or not 1 <= line <= len(_lines(pages[page - 1])):
                raise refused(Code.DECISION_INVALID, f"no line {line} on page {page}")

    def _extraction(self, inp: RecordReviewInput) -> Extraction:
        """The fields read: the record's copy once published, else the check's scratch copy."""
        record = self._record(inp)
        if record is not None and record.fields_key is not None:
            return Extraction.model_validate_json(self._store.get(record.fields_key))
        if inp.fields_key is None:
            return Extraction.model_validate({"classification": {"type": "form"}})
        key = self._refs.check(inp.fields_key, inp.tenant, inp.sha256, inp.fields_sig)
        return Extraction.model_validate_json(self._store.get(key))

    def _pages(self, inp: RecordReviewInput) -> list[PageText]:
        """The pages read: the record's copy once published (publish clears the scratch)."""
        record = self._record(inp)
        if record is not None:
            stored = json.loads(self._store.get(record.pages_key))
            return [PageText.model_validate(p) for p in stored]
        keys = self._refs.check_all(inp.page_keys, inp.tenant, inp.sha256, inp.page_sigs)
        return load_pages(self._store, keys)

    def _record(self, inp: RecordReviewInput) -> ResultRecord | None:
        if inp.record_key is None:
            return None
        return SignedRecord.model_validate_json(self._store.get(inp.record_key)).record

    def _derived(self, inp: RecordReviewInput, decision: SignedDecision) -> dict[str, Any]:
        """The derived version, signed by this worker's key: hashes and names, no values."""
        corrections = self._corrections(inp, decision)
        body = {
            "schema_version": 1,
            "sha256": inp.sha256,
            "tenant": inp.tenant,
            "verdict": inp.decision.verdict,
            "code": inp.decision.reject_code,
            "reviewed_by": inp.reviewed_by,
            "reviewed_at": datetime.now(UTC).isoformat(),
            "decision": decision.model_dump(mode="json"),
            "record_sha256": self._record_sha256(inp),
            "corrections_key": inp.decision.corrections_key,
            "corrections_sha256": decision.subject.get("corrections_sha256"),
            "fields": self._field_hashes(inp, corrections.get("fields", {})),
            "lines": self._line_hashes(inp, corrections.get("lines", [])),
            "note_sha256": decision.subject.get("note_sha256"),
            "workflow_id": inp.workflow_id,
            "run_id": inp.run_id,
        }
        signature = self._signer.sign(canonical_json(body))
        return {"review": body, "signature": signature.model_dump()}

    def _record_sha256(self, inp: RecordReviewInput) -> str | None:
        if inp.record_key is None or not self._store.exists(inp.record_key):
            return None
        raw = self._store.get(inp.record_key)
        SignedRecord.model_validate_json(raw)  # it is the evidence record, not another object
        return hashlib.sha256(raw).hexdigest()

    def _field_hashes(self, inp: RecordReviewInput, fields: dict[str, Any]) -> list[dict[str, str]]:
        if not fields:
            return []
        read = self._extraction(inp)
        return [
            {
                "name": name,
                "original_sha256": value_sha256(read.fields[name].value),
                "new_sha256": value_sha256(value),
            }
            for name, value in sorted(fields.items())
        ]

    def _line_hashes(
        self, inp: RecordReviewInput, lines: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        if not lines:
            return []
        pages = self._pages(inp)
        out = []
        for item in sorted(lines, key=lambda x: (int(x["page"]), int(x["line"]))):
            page, line = int(item["page"]), int(item["line"])
            original = _lines(pages[page - 1])[line - 1]
            out.append({"page": page, "line": line, "original_sha256": line_sha256(original),
                        "new_sha256": line_sha256(str(item["text"]))})  # fmt: skip
        return out


def _lines(page: PageText) -> list[str]:
    """A page's text lines, as reviewers count them (from 1, in reading order)."""
    return page.text.split("\n")


def _decision(inp: RecordReviewInput) -> SignedDecision:
    """The signed decision, for this document and this verdict, or a final refusal."""
    decision = parse(inp.decision.decision)
    s, d = decision.subject, inp.decision
    expected = (inp.sha256, inp.tenant, d.verdict, d.reject_code, d.corrections_key)
    named = (s.get("sha256"), s.get("tenant"), s.get("verdict"), s.get("reject_code"),
             s.get("corrections_key"))  # fmt: skip
    if decision.kind != "review" or named != expected:
        raise refused(Code.DECISION_INVALID, "the decision is for another document or verdict")
    return decision
