"""A release under a ``view: redacted`` policy: each document's redacted view in its packet.

The view is the one ``custody redact`` makes with the built-in ``default``
policy (made now if it does not exist yet, approved by the release's actor),
so what leaves has passed the leak check and is named by a signed view that
links to the evidence record. Its PDF is released like any other: the view's
painted pages with the release burned in (``activities.egress.render``, the
same watermark and identity as a normal release) over a text layer of the
kept words only, then C2PA-signed. The kept words are the evidence's words
less those the view's map covers, which is exactly the view's own text layer.
The text is the view's kept words.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import cache
from typing import TYPE_CHECKING

from activities.heartbeat import heartbeating
from activities.redact.check import view_pages
from activities.redact.plan import Region, kept_pages
from activities.redact.policy import DEFAULT_REDACTION
from activities.redact.service import Redactor
from activities.redact.view import RedactionView
from activities.scratch import StagingArea
from custody import egress as eg
from custody.errors import Code, EgressRefused
from custody.ledger.signing import Signer
from custody.models import PageText, SignedRecord
from custody.release_steps import RenderInput
from custody.settings import Settings
from custody.stores import ObjectStore

if TYPE_CHECKING:
    from activities.egress.build import Job
    from activities.egress.pdfmeta import ReleaseMark

Builder = tuple[str, str, Callable[[], bytes]]
#: Longest a view may take to make inside a release's render step (its timeout is 20 min).
_MAKE_DEADLINE_S = 15 * 60.0


def redacted_files(
    p: RenderInput,
    src: eg.SourceDoc,
    parts: tuple[ObjectStore, Signer, StagingArea, Settings],
    job: Job,
) -> Iterator[Builder]:
    """(name, media type, build) for each file of ``src``'s redacted view the policy includes."""
    store, signer, area, settings = parts

    @cache
    def view() -> RedactionView:
        redactor = Redactor.configured(store, signer, area, settings)
        with _beating(_MAKE_DEADLINE_S):
            return redactor.redact(src.sha256, p.tenant, DEFAULT_REDACTION, p.actor).view

    def pdf() -> bytes:
        return job._signed(watermarked(store, view(), job._mark()), "application/pdf")

    stem = f"document-{src.sha256[:16]}-redacted"
    if "searchable_pdf" in p.policy.include:
        yield f"{stem}.pdf", "application/pdf", pdf
    if "text" in p.policy.include:
        yield f"{stem}.txt", "text/plain", lambda: _checked(store, *_text(view()))


def watermarked(store: ObjectStore, view: RedactionView, mark: ReleaseMark) -> bytes:
    """The view's pages with ``mark`` burned in, over the kept words, with the release identity."""
    from activities.egress.render import render_release  # rendering loads only where used

    pdf = _checked(store, view.pdf_key, view.pdf_sha256)
    images = [image for _, _, image in view_pages(pdf, view.dpi)]
    record = SignedRecord.model_validate_json(
        _checked(store, view.record_key, view.record_sha256)
    ).record
    raw = json.loads(_checked(store, record.pages_key, record.pages_sha256))
    regions = [Region(e.page, _box(e.box), e.reason, e.source) for e in view.entries]
    kept = kept_pages([PageText.model_validate(page) for page in raw], regions)
    if len(kept) != len(images):
        raise EgressRefused(Code.SOURCE_ALTERED, "the view has another page count than its record")
    return render_release(zip(images, kept, strict=True), view.dpi, mark)


def _text(view: RedactionView) -> tuple[str, str]:
    return view.text_key, view.text_sha256


def _box(box: list[int]) -> tuple[int, int, int, int]:
    return box[0], box[1], box[2], box[3]


def _checked(store: ObjectStore, key: str, sha256: str) -> bytes:
    data = store.get(key)
    if sha256 and hashlib.sha256(data).hexdigest() != sha256:
        raise EgressRefused(Code.SOURCE_ALTERED, "an object no longer hashes to its view")
    return data


def _beating(deadline_s: float) -> AbstractContextManager[None]:
    """Heartbeat while a view is made (OCR pages take longer than the release's heartbeat
    timeout), for at most ``deadline_s``: a hung engine still loses the attempt."""
    return heartbeating("redacting", deadline_s, "redact-heartbeat")
