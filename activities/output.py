"""Check output: the OCR result must make sense before it may be published.

Rules: one result per validated page, some text somewhere, and a mean
confidence at or above the floor. Below the floor the document is quarantined
as ``LOW_CONFIDENCE`` for a person to review rather than published; between
the floor and the review line it is published with band ``review``. Since
review is a state (``CheckInput.review``, workflows.review), nothing a person
can resolve quarantines: below the floor, in the band, off language or with
fields the policy holds back, the result names why (``review_reasons``) and
the document waits for a reviewer. Then the
tenant's fields policy (``activities.rules``): each page in an expected
language (else ``LANGUAGE_MISMATCH``), and the fields read and judged (a
required field missing or one breaking its format sends the document to
``review`` or to quarantine, ``FIELDS_MISSING``/``FIELD_INVALID``).

Also the searchable PDF's assembly from its pages (``merge_pdfs``), which the
OCR activity runs once every page is recognised.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable

import pypdfium2 as pdfium
from temporalio import activity

from activities.faults import coded
from activities.pages.raster import PDFIUM_LOCK
from activities.rules.check import FieldsCheck
from custody.errors import Code, Quarantined
from custody.models import CheckInput, CheckResult, PageText
from custody.refs import RefKeys
from custody.reviews import REVIEW_BAND
from custody.state.rules import Verdict
from custody.stores import ObjectStore

#: Pages are joined by a line holding only a form feed, as in the corpus.
PAGE_SEPARATOR = "\n\f\n"


def load_pages(store: ObjectStore, keys: list[str]) -> list[PageText]:
    return [PageText.model_validate_json(store.get(k)) for k in keys]


def assemble(pages: list[PageText]) -> str:
    return PAGE_SEPARATOR.join(p.text for p in pages)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mean_confidence(pages: list[PageText]) -> float:
    """Weighted by characters, so a blank page does not drag a document down."""
    total = sum(len(p.text) for p in pages)
    if total == 0:
        return 0.0
    return round(sum(p.mean_confidence * len(p.text) for p in pages) / total, 4)


def merge_pdfs(parts: Iterable[bytes]) -> bytes:
    """One PDF of the pages of ``parts``, in order: the searchable PDF from its pages.

    Each page is built on its own (``searchable_pdf``) and merged in compressed:
    built in one document, pdfium holds every page's raw bitmap until it saves
    (measured: 164 MiB more at peak for 50 pages at 200 dpi, against 30 MiB
    this way). The lock is released between pages, so other OCR slots render.
    """
    with PDFIUM_LOCK:
        out = pdfium.PdfDocument.new()
    try:
        for part in parts:
            with PDFIUM_LOCK:
                page = pdfium.PdfDocument(part)
                try:
                    out.import_pages(page)
                finally:
                    page.close()
        buffer = io.BytesIO()
        with PDFIUM_LOCK:
            out.save(buffer)
        return buffer.getvalue()
    finally:
        with PDFIUM_LOCK:
            out.close()


class OutputActivities:
    def __init__(self, store: ObjectStore, floor: float, review: float) -> None:
        self._store = store
        self._refs = RefKeys.for_store(store)
        self._floor = floor
        self._review = review
        self._fields = FieldsCheck(store)

    @activity.defn(name="custody.check")
    @coded(Code.STORE_UNAVAILABLE)
    def check(self, inp: CheckInput) -> CheckResult:
        keys = self._refs.check_all(inp.page_keys, inp.tenant, inp.sha256, inp.page_sigs)
        pages = load_pages(self._store, keys)
        if len(pages) != inp.expected_pages or [p.page for p in pages] != list(range(len(pages))):
            raise Quarantined(Code.PAGE_COUNT_MISMATCH, f"{len(pages)} of {inp.expected_pages}")
        text = assemble(pages)
        if not text.strip():
            raise Quarantined(Code.NO_TEXT, f"{len(pages)} pages, no text recognised")
        mean = mean_confidence(pages)
        if mean < self._floor and not inp.review:
            raise Quarantined(Code.LOW_CONFIDENCE, f"mean {mean:.3f} < floor {self._floor:.2f}")
        policy = self._fields.policy(inp.tenant)
        in_language = self._fields.language(pages, policy, hold=not inp.review)
        sha = text_sha256(text)
        read = self._fields.fields(
            pages,
            sha256=inp.sha256,
            tenant=inp.tenant,
            text_sha256=sha,
            declared=inp.document_type,
            policy=policy,
            hold=not inp.review,
        )
        sure = mean >= self._review and in_language and not read.verdict.review
        reasons = _reasons(mean, self._floor, self._review, in_language, read.verdict)
        return CheckResult(
            text_sha256=sha,
            chars=len(text),
            mean_confidence=mean,
            page_confidences=[round(p.mean_confidence, 4) for p in pages],
            band="high" if sure else "review",
            attempt=activity.info().attempt,
            document_type=read.document_type,
            fields_key=read.key,
            fields_sig=read.sig,
            fields_review=read.verdict.review,
            review_reasons=reasons if inp.review else [],
        )


def _reasons(
    mean: float, floor: float, line: float, in_language: bool, verdict: Verdict
) -> list[str]:
    """Why a person must look at the document, as codes; empty when it may be published."""
    found = [Code.LOW_CONFIDENCE.value] if mean < floor else []
    found += [REVIEW_BAND] if floor <= mean < line else []
    found += [] if in_language else [Code.LANGUAGE_MISMATCH.value]
    found += [Code.FIELDS_MISSING.value] if verdict.missing else []
    return found + ([Code.FIELD_INVALID.value] if verdict.invalid else [])
