"""The build half of ``custody bench egress``: one released PDF per document, timed in parts.

Each document is built by ``activities.egress.build.Job`` exactly as the render
activity builds it (timed whole: ``pages_per_minute``; weighed against its
source and read back: :mod:`.egress_size`), then again part by part from the
same staged pages with the functions ``Job`` calls: rasterising the verified
source, the searchable PDF alone, the stamped PDF with its identity (the
watermark and page encoding are the difference) and the C2PA manifest.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from custody import egress as eg
from custody import ids
from custody.models import PageText, SignedRecord
from custody.release_steps import RenderInput
from custody.stores import ObjectStore
from starter.bench import egress_size
from starter.client.connect import CustodyClient

if TYPE_CHECKING:  # the renderer's libraries load only when a bench runs
    from activities.egress.build import Job

Figures = dict[str, Any]


def prepared(store: ObjectStore, tenant: str, shas: list[str]) -> RenderInput:
    """What the release workflow would hand the render activity, for a release to nobody."""
    sources = [
        eg.SourceDoc.of(
            SignedRecord.model_validate_json(store.get(ids.record_key(sha, tenant))).record
        )
        for sha in shas
    ]
    policy = eg.DEFAULT_POLICY
    return RenderInput(
        release_id=eg.release_id(tenant, "bench", policy.sha256(), shas),
        tenant=tenant,
        actor="bench",
        requested_at=datetime.now(UTC),
        policy=policy,
        recipient="bench",
        sources=sources,
    )


def build_all(
    client: CustodyClient, prepared: RenderInput, mark_pages: int, names: dict[str, str]
) -> Figures:
    """Every document's release built, timed and measured (``files``: :mod:`.egress_size`),
    keyed by ``names`` (SHA-256 to the scan's file name)."""
    from activities.egress import build
    from activities.scratch import StagingArea

    settings = client.settings
    parts = dict.fromkeys(("raster", "render", "watermark", "manifest"), 0.0)
    whole, pages = 0.0, 0
    kept: list[Any] = []
    files: dict[str, Figures] = {}
    for source in prepared.sources:
        job = build.Job(
            release=prepared,
            source=source,
            area=StagingArea(settings.staging_path),
            store=client.store,
            dpi=settings.limits.ocr_dpi,
            c2pa_dir=settings.signing_path / "c2pa",
            production=settings.env == "production",
        )
        started = time.perf_counter()
        data = job.pdf()
        whole += time.perf_counter() - started
        pages += source.pages
        images = _parts(job, parts)
        size = _source_bytes(client.store, prepared.tenant, source.sha256)
        mark = _release_mark(prepared)
        name = names.get(source.sha256, source.sha256)
        files[name] = egress_size.measure_file(data, size, images, mark, job.dpi)
        kept += images[: max(0, mark_pages - len(kept))]
    return {
        **egress_size.summary(files),
        "files": files,
        "pages": pages,
        "build_seconds": round(whole, 3),
        "pages_per_minute": round(pages / whole * 60, 2) if whole else None,
        "parts": {f"{name}_seconds": round(s, 3) for name, s in parts.items()},
        "mark": _mark(kept),
    }


def _parts(job: Job, parts: dict[str, float]) -> list[Any]:
    """One document's build again, part by part; its page images, for the mark measure."""
    from activities.egress import provenance
    from activities.egress.render import render_release
    from activities.pages.raster import iter_pages
    from activities.pages.searchable import searchable_pdf

    src, p = job.source, job.release
    clock = _Clock()
    texts = [PageText.model_validate(t) for t in json.loads(job.store.get(src.pages_key))]
    with job.area.staged(job.store, src.source_key, src.sha256) as path:
        images = [image for _, image in iter_pages(path, src.media_type, job.dpi)]
    parts["raster"] += clock.lap()
    searchable_pdf(zip(images, texts, strict=True), job.dpi)
    plain = clock.lap()
    stamped = render_release(zip(images, texts, strict=True), job.dpi, _release_mark(p))
    parts["render"] += plain
    parts["watermark"] += max(0.0, clock.lap() - plain)
    claim = provenance.EgressClaim(
        release_id=p.release_id,
        recipient=p.recipient,
        policy_name=p.policy.name,
        policy_sha256=p.policy.sha256(),
        source_sha256s=[s.sha256 for s in p.sources],
        tenant=p.tenant,
    )
    creds = provenance.ensure_chain(job.c2pa_dir, production=job.production)
    provenance.sign_file(stamped, "application/pdf", claim, creds)
    parts["manifest"] += clock.lap()
    return images


def _release_mark(p: RenderInput) -> Any:
    from activities.egress.pdfmeta import ReleaseMark

    return ReleaseMark(
        release_id=p.release_id,
        recipient=p.recipient,
        policy_name=p.policy.name,
        policy_sha256=p.policy.sha256(),
        date=p.requested_at.date().isoformat(),
        template=p.policy.watermark,
    )


def _source_bytes(store: ObjectStore, tenant: str | None, sha: str) -> int:
    record = SignedRecord.model_validate_json(store.get(ids.record_key(sha, tenant)))
    return record.record.size_bytes


class _Clock:
    def __init__(self) -> None:
        self._last = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        elapsed, self._last = now - self._last, now
        return elapsed


def _mark(pages: list[Any]) -> Figures:
    if not pages:
        return {}
    from starter.bench.mark import measure_mark

    report = measure_mark(pages, seed=0)
    return {name: round(float(value), 4) for name, value in report.items()}
