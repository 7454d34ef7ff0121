"""A preview on the OCR worker: one small document read now, its pages left for the edge.

Runs on the OCR task queue beside ``custody.ocr``, with the worker's engine
and its engine lanes, so a preview never loads a second model and never takes
more of the CPU than the worker's lanes allow; the worker's slots bound how
many run at once. The intake rules run in the sandboxed child (as validation
runs them), the pages are rendered there too, and every side is checked
against the preview's tighter limits (``custody.previews``).

The pages (text, words, boxes) are written to the preview's scratch object
and only their key and counts go back: nothing the engine read reaches
workflow history, a log line or a metric. Past the deadline the work stops
before its next page, writes nothing, and fails ``PREVIEW_TIMEOUT``: nobody
waits for it any more.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

from temporalio import activity

from activities.engines.base import OcrEngine
from activities.engines.lanes import EngineLanes
from activities.faults import coded
from activities.heartbeat import heartbeating
from activities.inspect.sandboxed import iter_pages_sandboxed
from activities.inspect.untrusted import inspect_untrusted, prewarm
from activities.pages.raster import GrayPage
from activities.scratch import StagingArea
from custody.errors import Code, DocumentRejected, TransientFault
from custody.models import PageText
from custody.previews import PreviewInput, PreviewResult, max_side, preview_limits
from custody.refs import RefKeys
from custody.settings import Limits
from custody.stores import ObjectStore


class PreviewActivities:
    """The preview step, over the OCR worker's store, staging area, engine and lanes."""

    def __init__(
        self,
        store: ObjectStore,
        area: StagingArea,
        engine: OcrEngine,
        lanes: EngineLanes,
        limits: Limits,
    ) -> None:
        self._store, self._area, self._engine = store, area, engine
        self._refs = RefKeys.for_store(store)
        self._lanes, self._limits = lanes, limits
        prewarm()  # the sandbox's zygote, before the first preview needs it

    @activity.defn(name="custody.preview")
    @coded(Code.OCR_ERROR)
    def preview(self, inp: PreviewInput) -> PreviewResult:
        ends = time.monotonic() + _left(inp.deadline_s)
        limits = preview_limits(self._limits, inp.deadline_s)
        source = self._refs.check(inp.source_key, inp.tenant, inp.sha256, inp.source_sig)
        with (
            heartbeating({"preview": True}, inp.deadline_s, "preview-heartbeat"),
            self._area.staged(self._store, source, inp.sha256) as path,
        ):
            inspect_untrusted(path, limits)  # the intake rules, in the sandboxed child
            pages = [self._read(image, index, ends) for index, image in _render(path, inp, limits)]
        _check_time(ends)  # a late answer is read by nobody: write nothing
        data = json.dumps([p.model_dump(mode="json") for p in pages]).encode()
        self._store.put(inp.pages_key, data)
        return PreviewResult(
            pages_key=inp.pages_key,
            pages=len(pages),
            engine=self._engine.name,
            engine_version=self._engine.version,
        )

    def _read(self, image: GrayPage, index: int, ends: float) -> PageText:
        _check_time(ends)  # before each page: past the deadline the work stops here
        with self._lanes.lane(lambda: activity.heartbeat({"waiting_for_engine": True})):
            return self._engine.recognise(image, index)


def _render(path: Path, inp: PreviewInput, limits: Limits) -> list[tuple[int, GrayPage]]:
    """Every page as the OCR stage sees it, rendered in the sandboxed child; sides checked."""
    side = max_side(limits)
    pages = []
    for index, image in iter_pages_sandboxed(path, inp.media_type, limits.ocr_dpi, 0, limits):
        height, width = image.shape
        if max(height, width) > side:
            raise DocumentRejected(Code.PIXEL_LIMIT, f"page side {max(height, width)} px > {side}")
        if index >= limits.max_pages:  # inspection counted them; the renderer must agree
            raise DocumentRejected(Code.PAGE_LIMIT, f"more than {limits.max_pages} pages")
        pages.append((index, image))
    return pages


def _left(deadline_s: float) -> float:
    """Seconds of the deadline left once this attempt started (time queued is spent)."""
    if not activity.in_activity():
        return deadline_s
    queued = datetime.now(UTC) - activity.info().current_attempt_scheduled_time
    return deadline_s - max(0.0, queued.total_seconds())


def _check_time(ends: float) -> None:
    if time.monotonic() > ends:
        raise TransientFault(Code.PREVIEW_TIMEOUT, "past the preview's deadline")
