"""Check output: the OCR result must make sense before it may be published.

Rules: one result per validated page, some text somewhere, and a mean
confidence at or above the floor. Below the floor the document is quarantined
as ``LOW_CONFIDENCE`` for a person to review rather than published; between
the floor and the review line it is published with band ``review``.
"""

from __future__ import annotations

import hashlib

from temporalio import activity

from activities.faults import coded
from custody.errors import Code, Quarantined
from custody.models import CheckInput, CheckResult, PageText
from custody.refs import RefKeys
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


class OutputActivities:
    def __init__(self, store: ObjectStore, floor: float, review: float) -> None:
        self._store = store
        self._refs = RefKeys.for_store(store)
        self._floor = floor
        self._review = review

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
        if mean < self._floor:
            raise Quarantined(Code.LOW_CONFIDENCE, f"mean {mean:.3f} < floor {self._floor:.2f}")
        return CheckResult(
            text_sha256=text_sha256(text),
            chars=len(text),
            mean_confidence=mean,
            page_confidences=[round(p.mean_confidence, 4) for p in pages],
            band="high" if mean >= self._review else "review",
            attempt=activity.info().attempt,
        )
