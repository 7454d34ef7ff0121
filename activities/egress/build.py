"""Build one released file from a verified source: render, watermark, sign.

The source is staged from the store and re-hashed against the document's
SHA-256 on the way (``StagingArea.staged``), so the released bytes derive from
exactly the bytes the signed record names, never from scratch files. The
words laid under each page are the ones published for it.

The source is decoded only in the locked-down inspection child
(``activities.inspect.sandboxed``), as for OCR and redaction: its pages come
back as raw gray bitmaps, and this worker, which holds the signing, C2PA and
key-encryption keys, only stamps and assembles pixels it was sent. An image
on a born-digital page (JBIG2, JPX, CCITT) meets pdfium's decoders there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import activities.egress.provenance as provenance
from activities.egress.original import Original
from activities.egress.pdfmeta import ReleaseMark
from activities.egress.render import render_page_png, render_release
from activities.inspect.sandboxed import iter_pages_sandboxed, originals_sandboxed
from activities.pages.raster import GrayPage
from activities.scratch import StagingArea
from custody import egress as eg
from custody.errors import ProvenanceInvalid
from custody.models import PageText
from custody.release_steps import RenderInput
from custody.settings import Limits
from custody.stores import ObjectStore

#: One released file: its name, media type, and how to make it.
Builder = tuple[str, str, Callable[[], bytes]]


@dataclass
class Job:
    release: RenderInput
    source: eg.SourceDoc
    area: StagingArea
    store: ObjectStore
    dpi: int
    c2pa_dir: Path
    production: bool
    #: The intake policy's decode limits: the child renders under them.
    limits: Limits = field(default_factory=Limits)

    def pdf(self) -> bytes:
        with self._pages() as (pages, originals):
            data = render_release(pages, self.dpi, self._mark(), originals)
        return self._signed(data, "application/pdf")

    def png(self, index: int) -> Callable[[], bytes]:
        def build() -> bytes:
            with self._pages(start=index) as (pages, originals):  # the child renders from it
                for image, _text in pages:
                    original = originals[index] if index < len(originals) else None
                    data = render_page_png(
                        image, self._mark(), dpi=self.dpi, page_number=index + 1, original=original
                    )
                    return self._signed(data, "image/png")
            raise ValueError(f"page {index + 1} not found")

        return build

    def _mark(self) -> ReleaseMark:
        release, policy = self.release, self.release.policy
        return ReleaseMark(
            release_id=release.release_id,
            recipient=release.recipient,
            policy_name=policy.name,
            policy_sha256=policy.sha256(),
            date=release.requested_at.date().isoformat(),
            template=policy.watermark,
        )

    def _signed(self, data: bytes, media_type: str) -> bytes:
        release, policy = self.release, self.release.policy
        if not policy.c2pa:
            return data
        claim = provenance.EgressClaim(
            release_id=release.release_id,
            recipient=release.recipient,
            policy_name=policy.name,
            policy_sha256=policy.sha256(),
            source_sha256s=[s.sha256 for s in release.sources],
            tenant=release.tenant,
        )
        creds = provenance.ensure_chain(self.c2pa_dir, production=self.production)
        return provenance.sign_file(data, media_type, claim, creds)

    def _pages(self, start: int = 0) -> _Pages:
        return _Pages(self, start)


def files(job: Job) -> Iterator[Builder]:
    """Each file of ``job``'s source that its policy includes."""
    include, src = job.release.policy.include, job.source
    stem = f"document-{src.sha256[:16]}"
    if "searchable_pdf" in include:
        yield f"{stem}.pdf", "application/pdf", job.pdf
    if "page_images" in include:
        for page in range(src.pages):
            yield f"{stem}-p{page + 1:03d}.png", "image/png", job.png(page)
    if "text" in include:
        yield f"{stem}.txt", "text/plain", lambda: job.store.get(src.text_key)


def manifest_sha256(data: bytes, media_type: str, c2pa_dir: Path, production: bool) -> str:
    """The hash of the C2PA manifest just embedded in ``data``, read back as a verifier would."""
    creds = provenance.ensure_chain(c2pa_dir, production=production)
    reading = provenance.read_claim(data, media_type, creds.ca_pem)
    if reading is None or not reading.verified:
        raise ProvenanceInvalid("the released file's manifest does not verify")
    return reading.manifest_sha256


class _Pages:
    """The source's page images, rendered in the sandboxed child from page ``start``, paired
    with their published words, and what each page's own scan was (:mod:`.original`, also
    read in the child), so none is released upsampled; the source staged privately for as
    long as they are read."""

    def __init__(self, job: Job, start: int) -> None:
        self._job, self._start = job, start
        self._staged = job.area.staged(job.store, job.source.source_key, job.source.sha256)
        self._images: Iterator[tuple[int, GrayPage]] | None = None

    def __enter__(self) -> tuple[Iterator[tuple[GrayPage, PageText]], list[Original]]:
        job = self._job
        path = self._staged.__enter__()
        try:
            raw = json.loads(job.store.get(job.source.pages_key))
            texts = [PageText.model_validate(page) for page in raw]
            scans = originals_sandboxed(path, job.source.media_type, job.limits)
        except BaseException:
            self._staged.__exit__(None, None, None)  # the staged copy goes on every path
            raise
        self._images = iter_pages_sandboxed(
            path, job.source.media_type, job.dpi, self._start, job.limits
        )
        return ((image, texts[n]) for n, image in self._images), scans

    def __exit__(self, *exc: object) -> None:
        # Closing the stream kills a child still rendering (a PNG wants one page).
        close = getattr(self._images, "close", None)
        try:
            if close is not None:
                close()
        finally:
            self._staged.__exit__(None, None, None)
