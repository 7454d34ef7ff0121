"""Make, sign and store a published document's redacted view, once per policy.

The evidence is only read: the signed record (whose stored bytes' hash the
view records), its pages' words, its extraction, and its source, which is
staged, re-hashed against the record and rendered in the sandboxed child
(``activities.inspect.sandboxed``), never decoded here. A view that is kept
is recorded in the tenant's ledger (``redaction_created``, custody.redactions)
before its signed record is written, and the record names that event. A
second request for the same document and policy returns the view already stored.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from activities.engines.base import OcrEngine
from activities.engines.selection import build_checker, build_engine
from activities.inspect.sandboxed import iter_pages_sandboxed
from activities.redact.core import Made, make_view
from activities.redact.policy import RedactionPolicy
from activities.redact.view import RedactionEntry, RedactionView, SignedView, ViewCheck
from activities.scratch import StagingArea
from custody import ids
from custody.errors import Code, EgressRefused
from custody.fields import Extraction
from custody.ledger.events import Event
from custody.ledger.signing import Signer
from custody.models import EventRef, PageText, ResultRecord, SignedRecord
from custody.redactions import (
    REDACTION_EVENT,
    event_once,
    view_key,
    view_pdf_key,
    view_text_key,
)
from custody.settings import Limits, Settings
from custody.state.egress import append_once
from custody.stores import ObjectStore


class Redactor:
    def __init__(
        self,
        store: ObjectStore,
        signer: Signer,
        area: StagingArea,
        engine: Callable[[], OcrEngine],
        limits: Limits,
        *,
        checker: Callable[[], OcrEngine | None],
    ) -> None:
        """``engine`` builds the workers' OCR engine, ``checker`` the check's second
        reader (``build_checker``; None reads with ``engine`` alone); each is built
        on the first view that needs it."""
        self._store, self._signer, self._area = store, signer, area
        self._engine, self._checker = engine, checker
        self._made_engine: OcrEngine | None = None
        self._made_checker: OcrEngine | None = None
        self._engine_lock = threading.Lock()  # views made at once on a worker's threads
        self._limits = limits

    @classmethod
    def configured(
        cls, store: ObjectStore, signer: Signer, area: StagingArea, settings: Settings
    ) -> Redactor:
        """As the workers make views: the settings' OCR engine and its check's second
        reader (``build_checker``), each built on the first view."""
        return cls(
            store,
            signer,
            area,
            lambda: build_engine(settings),
            settings.limits,
            checker=lambda: build_checker(settings),
        )

    def redact(
        self, sha256: str, tenant: str | None, policy: RedactionPolicy, approved_by: str
    ) -> SignedView:
        key = view_key(ids.check_sha256(sha256), tenant, policy.sha256())
        if not self._store.exists(key):
            self._make(sha256, tenant, policy, approved_by)
        return SignedView.model_validate_json(self._store.get(key))

    def _make(self, sha256: str, tenant: str | None, policy: RedactionPolicy, by: str) -> None:
        record_key = ids.record_key(sha256, tenant)
        if not self._store.exists(record_key):
            raise EgressRefused(Code.NOT_PUBLISHED, f"document {sha256[:12]} is not published here")
        record_bytes = self._store.get(record_key)
        record = SignedRecord.model_validate_json(record_bytes).record
        if record.sha256 != sha256 or record.tenant != tenant:
            raise EgressRefused(Code.SOURCE_ALTERED, f"record of {sha256[:12]} names another")
        made = self._view(record, policy)
        view = self._store_view(record, record_key, record_bytes, policy, made, by)
        event = self._record_event(view)
        view = view.model_copy(update={"event": EventRef(seq=event.seq, hash=event.hash)})
        self._signer.publish(self._store)
        self._store.create(
            view_key(sha256, tenant, policy.sha256()),
            SignedView.sign(view, self._signer).canonical(),
        )

    def _view(self, record: ResultRecord, policy: RedactionPolicy) -> Made:
        pages = [
            PageText.model_validate(p)
            for p in json.loads(self._checked(record.pages_key, record.pages_sha256))
        ]
        extraction = None
        if record.fields_key:
            extraction = Extraction.model_validate_json(
                self._checked(record.fields_key, record.fields_sha256)
            )
        dpi = self._limits.ocr_dpi
        with self._area.staged(self._store, record.source_key, record.sha256) as path:
            images = iter_pages_sandboxed(path, record.media_type, dpi, 0, self._limits)
            engine, second = self._ocr()
            return make_view(images, pages, extraction, policy, engine, dpi, second)

    def _checked(self, key: str, sha256: str) -> bytes:
        data = self._store.get(key)
        if sha256 and hashlib.sha256(data).hexdigest() != sha256:
            raise EgressRefused(Code.SOURCE_ALTERED, "an object no longer hashes to its record")
        return data

    def _store_view(
        self,
        record: ResultRecord,
        record_key: str,
        record_bytes: bytes,
        policy: RedactionPolicy,
        made: Made,
        by: str,
    ) -> RedactionView:
        sha, tenant, psha = record.sha256, record.tenant, policy.sha256()
        pdf_key, text_key = view_pdf_key(sha, tenant, psha), view_text_key(sha, tenant, psha)
        self._store.create(pdf_key, made.pdf)
        self._store.create(text_key, made.text.encode())
        report = made.report
        return RedactionView(
            sha256=sha,
            tenant=tenant,
            record_key=record_key,
            record_sha256=hashlib.sha256(record_bytes).hexdigest(),
            policy=policy.name,
            policy_sha256=psha,
            dpi=self._limits.ocr_dpi,
            # What is stored is what the view names: an earlier attempt may have written it.
            pdf_key=pdf_key,
            pdf_sha256=hashlib.sha256(self._store.get(pdf_key)).hexdigest(),
            text_key=text_key,
            text_sha256=hashlib.sha256(self._store.get(text_key)).hexdigest(),
            entries=[
                RedactionEntry(
                    page=r.page, box=list(r.box), reason=r.reason, source=r.source, approved_by=by
                )
                for r in made.plan.regions
            ],
            check=ViewCheck(
                engine=report.engine,
                engine_version=report.engine_version,
                pages=report.pages,
                strings=report.strings,
                leaks=len(report.leaks),
            ),
            approved_by=by,
            created_at=datetime.now(UTC),
        )

    def _record_event(self, view: RedactionView) -> Event:
        """The view's ``redaction_created`` event, appended once: a retry that finds the one
        an earlier attempt appended (through its marker) names that one."""
        return append_once(
            self._store,
            view.tenant,
            REDACTION_EVENT,
            once=event_once(view.sha256, view.tenant, view.policy_sha256),
            sha256=view.sha256,
            actor=view.approved_by,
            detail={
                "view_key": view_key(view.sha256, view.tenant, view.policy_sha256),
                "view_sha256": view.pdf_sha256,
                "text_sha256": view.text_sha256,
                "record_sha256": view.record_sha256,
                "policy": view.policy,
                "policy_sha256": view.policy_sha256,
                "box_count": len(view.entries),
            },
        )

    def _ocr(self) -> tuple[OcrEngine, OcrEngine | None]:
        with self._engine_lock:  # one of each, built on the first view that needs it
            if self._made_engine is None:
                # Both or neither: a checker that failed to build (no Tesseract) must fail
                # the next view too, not let it be checked by the first engine alone.
                checker, engine = self._checker(), self._engine()
                self._made_engine, self._made_checker = engine, checker
            return self._made_engine, self._made_checker
