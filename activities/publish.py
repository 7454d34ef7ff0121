"""Publish and conclude: the one durable fact per document, created never replaced.

``publish`` writes the text and per-page results under keys derived from the
text's SHA-256, then creates the result record with a conditional create keyed
by the document's SHA-256. A late retry, a duplicate delivery or a second worker
finds the record there and returns it; it never writes a second one.
The searchable PDF the OCR activity built is copied beside the text the same
way and its hash signed into the record (or, for a born-digital PDF read from
its own text layer, the record names the source as the searchable PDF).
The fields the check read are copied beside the text too, their hash signed
into the record, and indexed by keyed hash for ``evidence find --field``.
``conclude`` does the same for a rejection or quarantine, beside the kept source.

The record is signed (Ed25519, key ID inside) over its canonical JSON, and its
publication is appended to the audit ledger, followed by a signed checkpoint
of the ledger's head.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import structlog
from temporalio import activity

from activities.audit import record
from activities.faults import WORKER, coded, fault_point
from activities.output import assemble, load_pages, text_sha256
from activities.rules.check import fields_key
from custody import field_index, ids
from custody.canonical import canonical_json
from custody.errors import Code, Quarantined
from custody.fields import Extraction
from custody.ledger.checkpoints import checkpoint
from custody.ledger.events import Ledger
from custody.ledger.signing import Signer
from custody.models import (
    ConcludeInput,
    ConcludeResult,
    OutcomeRecord,
    PublishInput,
    PublishResult,
    RecordSignature,
    ResultRecord,
    SignedRecord,
    Transition,
)
from custody.refs import RefKeys
from custody.stores import ObjectStore

log = structlog.get_logger("custody.activity")


class PublishActivities:
    def __init__(self, store: ObjectStore, signer: Signer) -> None:
        self._store = store
        self._refs = RefKeys.for_store(store)
        self._signer = signer
        self._key_published = False

    @activity.defn(name="custody.publish")
    @coded(Code.STORE_UNAVAILABLE)
    def publish(self, inp: PublishInput) -> PublishResult:
        # The record names the source (evidence export opens it): checked like the pages.
        self._refs.check(inp.source_key, inp.tenant, inp.sha256, inp.source_sig)
        ocr, text_sha = inp.ocr, inp.check.text_sha256
        page_keys = self._refs.check_all(ocr.page_keys, inp.tenant, inp.sha256, ocr.page_sigs)
        if ocr.pdf_key is not None:
            self._refs.check(ocr.pdf_key, inp.tenant, inp.sha256, ocr.pdf_sig)
        record_key = ids.record_key(inp.sha256, inp.tenant)
        attempt = activity.info().attempt
        if self._store.exists(record_key):
            return self._existing(inp, record_key, attempt)
        activity.heartbeat()
        pages = load_pages(self._store, page_keys)
        text = assemble(pages)
        if text_sha256(text) != text_sha:
            raise Quarantined(Code.HASH_MISMATCH, "OCR output changed after it was checked")
        text_key = ids.text_key(inp.sha256, inp.tenant, text_sha)
        pages_key = ids.pages_key(inp.sha256, inp.tenant, text_sha)
        self._store.create(text_key, text.encode("utf-8"))
        pages_json = json.dumps([p.model_dump(mode="json") for p in pages], ensure_ascii=False)
        self._store.create(pages_key, pages_json.encode("utf-8"))
        # Hash what is stored: an earlier attempt may have written it first.
        pages_sha = hashlib.sha256(self._store.get(pages_key)).hexdigest()
        searchable = self._searchable(inp)
        read = self._fields(inp)
        activity.heartbeat()
        fault_point("publish.before_record")
        body = _record(inp, text_key, pages_key, pages_sha, attempt)
        signed = self._sign(body.model_copy(update=searchable | read))
        if not self._store.create(record_key, canonical_json(signed)):
            return self._existing(inp, record_key, attempt)  # lost a race to a twin attempt
        fault_point("publish.after_record")
        event = record(
            self._store,
            inp.tenant,
            "published",
            inp.sha256,
            text_sha256=text_sha,
            record_sha256=hashlib.sha256(canonical_json(signed)).hexdigest(),
            kid=signed.signature.kid,
        )
        checkpoint(Ledger(self._store, inp.tenant), self._signer, head=event)
        self._clear_work(inp.sha256, inp.tenant)
        return PublishResult(
            record_key=record_key, text_key=text_key, created=True, attempt=attempt
        )

    def _searchable(self, inp: PublishInput) -> dict[str, object]:
        """The record's searchable-PDF fields, after copying a built one beside the text."""
        if inp.ocr.searchable == "original":
            return {"searchable": "original", "pdf_key": inp.source_key, "pdf_sha256": inp.sha256}
        if inp.ocr.pdf_key is None:
            return {}  # an OCR result from before searchable output
        key = ids.pdf_key(inp.sha256, inp.tenant, inp.check.text_sha256)
        self._store.create(key, self._store.get(inp.ocr.pdf_key))
        sha = hashlib.sha256(self._store.get(key)).hexdigest()
        return {"searchable": "built", "pdf_key": key, "pdf_sha256": sha}

    def _fields(self, inp: PublishInput) -> dict[str, object]:
        """The record's fields entries, after copying the sealed fields beside the text."""
        check = inp.check
        if check.fields_key is None:
            return {}  # a check from before fields were read
        self._refs.check(check.fields_key, inp.tenant, inp.sha256, check.fields_sig)
        key = fields_key(inp.sha256, inp.tenant, check.text_sha256)
        self._store.create(key, self._store.get(check.fields_key))
        stored = self._store.get(key)  # hash and index what is stored
        extraction = Extraction.model_validate_json(stored)
        field_index.write(self._store, inp.tenant, inp.sha256, extraction)
        return {
            "document_type": check.document_type,
            "fields_key": key,
            "fields_sha256": hashlib.sha256(stored).hexdigest(),
            "fields_review": check.fields_review,
        }

    def _sign(self, body: ResultRecord) -> SignedRecord:
        if not self._key_published:  # once per worker: verifiers find the key that signed
            self._signer.publish(self._store)
            self._key_published = True
        sig = self._signer.sign(canonical_json(body))
        return SignedRecord(record=body, signature=RecordSignature(**sig.model_dump()))

    @activity.defn(name="custody.conclude")
    @coded(Code.STORE_UNAVAILABLE)
    def conclude(self, inp: ConcludeInput) -> ConcludeResult:
        key = ids.outcome_key(inp.sha256, inp.tenant, inp.run_id)
        outcome = OutcomeRecord(**inp.model_dump(), concluded_at=datetime.now(UTC))
        body = canonical_json(outcome.model_copy(update={"transitions": owned(inp.transitions)}))
        created = self._store.create(key, body)
        # Recorded on a retry too (idempotent per step): an attempt that stored the
        # outcome and failed before its event or checkpoint must not leave it unlogged.
        stored = body if created else self._store.get(key)
        record(  # the outcome's hash in the ledger pins it (verify: outcome.hash)
            self._store,
            inp.tenant,
            inp.state.value,
            inp.sha256,
            code=inp.code,
            outcome_sha256=hashlib.sha256(stored).hexdigest(),
        )
        self._clear_work(inp.sha256, inp.tenant)
        return ConcludeResult(outcome_key=key, created=created)

    def _existing(self, inp: PublishInput, record_key: str, attempt: int) -> PublishResult:
        stored = self._store.get(record_key)
        signed = SignedRecord.model_validate_json(stored)
        if signed.record.run_id == activity.info().workflow_run_id:
            # This run's earlier attempt stored it: its event is logged and sealed once.
            record(
                self._store,
                inp.tenant,
                "published",
                inp.sha256,
                text_sha256=signed.record.text_sha256,
                record_sha256=hashlib.sha256(stored).hexdigest(),
                kid=signed.signature.kid,
            )
        else:  # a twin or an older run found the fact already there: never replace it
            record(
                self._store,
                inp.tenant,
                "publish_duplicate",
                inp.sha256,
                existing_run_id=signed.record.run_id,
            )
        log.info("publish_found_existing")
        return PublishResult(
            record_key=record_key, text_key=signed.record.text_key, created=False, attempt=attempt
        )

    def _clear_work(self, sha256: str, tenant: str | None) -> None:
        # Scratch OCR output is no longer needed once a durable fact exists.
        for key in list(self._store.list(ids.work_prefix(sha256, tenant))):
            self._store.delete(key)


def owned(transitions: list[Transition]) -> list[Transition]:
    """The transitions, the last (this step's own outcome) owned by this worker if no one
    else is named: the workflow states it before the step that makes it true runs."""
    if not transitions or transitions[-1].by is not None:
        return list(transitions)
    return [*transitions[:-1], transitions[-1].model_copy(update={"by": WORKER})]


def _record(
    inp: PublishInput, text_key: str, pages_key: str, pages_sha: str, attempt: int
) -> ResultRecord:
    return ResultRecord(
        sha256=inp.sha256,
        tenant=inp.tenant,
        source_id=inp.source_id,
        source_key=inp.source_key,
        size_bytes=inp.size_bytes,
        media_type=inp.media_type,
        policy_version=inp.policy_version,
        pages=len(inp.ocr.page_keys),
        page_confidences=inp.check.page_confidences,
        mean_confidence=inp.check.mean_confidence,
        confidence_band=inp.check.band,
        text_key=text_key,
        pages_key=pages_key,
        text_sha256=inp.check.text_sha256,
        pages_sha256=pages_sha,
        chars=inp.check.chars,
        engine=inp.ocr.engine,
        engine_version=inp.ocr.engine_version,
        ocr_params=inp.ocr.params,
        model_hashes=inp.ocr.model_hashes,
        ocr_seconds=inp.ocr.seconds,
        transitions=owned(inp.transitions),
        attempts={**inp.attempts, "publish": attempt},
        workflow_id=inp.workflow_id,
        run_id=inp.run_id,
        published_at=datetime.now(UTC),
        captured_at=inp.captured_at,
        signer=inp.signer,
        packet_event=inp.packet_event,
        text_layer_pages=inp.ocr.text_layer_pages,
        text_layer_sha256=inp.ocr.text_layer_sha256,
    )
