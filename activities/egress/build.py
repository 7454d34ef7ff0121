"""Build one released file from a verified source: render, watermark, sign.

The source is staged from the store and re-hashed against the document's
SHA-256 on the way (``StagingArea.staged``), so the released bytes derive from
exactly the bytes the signed record names, never from scratch files. The
words laid under each page are the ones published for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import activities.egress.provenance as provenance
from activities.egress.pdfmeta import ReleaseMark
from activities.egress.render import render_page_png, render_release
from activities.pages.raster import GrayPage, iter_pages
from activities.scratch import StagingArea
from custody import egress as eg
from custody.errors import ProvenanceInvalid
from custody.models import PageText
from custody.release_steps import RenderInput
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

    def pdf(self) -> bytes:
        with self._pages() as pages:
            data = render_release(pages, self.dpi, self._mark())
        return self._signed(data, "application/pdf")

    def png(self, index: int) -> Callable[[], bytes]:
        def build() -> bytes:
            with self._pages() as pages:
                for n, (image, _text) in enumerate(pages):
                    if n == index:
                        return self._signed(
                            render_page_png(image, self._mark(), dpi=self.dpi), "image/png"
                        )
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

    def _pages(self) -> _Pages:
        return _Pages(self)


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
    """The source's page images paired with their published words, staged privately."""

    def __init__(self, job: Job) -> None:
        self._job = job
        self._staged = job.area.staged(job.store, job.source.source_key, job.source.sha256)

    def __enter__(self) -> Iterator[tuple[GrayPage, PageText]]:
        path = self._staged.__enter__()
        raw = json.loads(self._job.store.get(self._job.source.pages_key))
        texts = [PageText.model_validate(p) for p in raw]
        images = iter_pages(path, self._job.source.media_type, self._job.dpi)
        return ((image, texts[n]) for n, image in images)

    def __exit__(self, *exc: object) -> None:
        self._staged.__exit__(None, None, None)
