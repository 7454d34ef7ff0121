"""OCR: recognise every page, heartbeating per page, resuming after a retry.

Runs on the OCR task queue, one document per pool slot; only the engine call
holds one of the worker's engine lanes (``activities.engines.lanes``), so a document
staged ahead is fetched and rasterised while another's page is recognised,
and a page waiting for a lane heartbeats. Each finished page is
written to the object store as scratch output of this attempt and reported in
a heartbeat (a count, visible in the UI); a retried attempt (worker lost,
heartbeat timed out) finds the pages earlier attempts of the run wrote and
starts after them instead of from page one. Each attempt writes only under its
own prefix, so an abandoned attempt still running cannot overwrite another's
pages. Text, boxes and confidences stay in the store: only keys and numbers go
back to the workflow.

PDF pages with a text layer their author typeset (``activities.pages.textlayer``)
are read from it instead when the policy prefers (``CUSTODY_LIMIT_TEXT_LAYER``),
and the result lists them with each one's text hash; a PDF whose every page
came from its text layer never reaches the engine. Last, the page images and
the recognised words become a searchable PDF (``activities.pages.searchable``) in
this attempt's scratch space, signed like the pages, for publish to keep
beside the text; a wholly born-digital PDF is searchable already, so none is
built and the result says the original serves.

Every page image is rendered in the locked-down inspection child
(``activities.inspect.sandboxed``), never by a decoder in this worker; only a
PDF's text layer is still parsed here. A page the child refuses is a coded
rejection, as validation's would be; a renderer that died is a transient
fault, retried.

Fault point ``CUSTODY_FAULTS=ocr.hang=SECONDS`` (chaos harness, off by
default): each page of the first attempt stalls that long before recognition,
so heartbeats stop after the page deadline, as with a hung decoder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Literal

import pypdfium2 as pdfium
import structlog
from temporalio import activity

from activities.audit import record
from activities.engines.base import OcrEngine
from activities.engines.lanes import EngineLanes
from activities.faults import coded, fault_point
from activities.fields.marks import find_marks
from activities.heartbeat import heartbeating
from activities.inspect.sandboxed import iter_layers_sandboxed, iter_pages_sandboxed
from activities.inspect.untrusted import prewarm
from activities.output import load_pages, mean_confidence, merge_pdfs
from activities.pages.raster import PDF, GrayPage
from activities.pages.searchable import searchable_pdf
from activities.pages.textlayer import ENGINE as TEXT_LAYER_ENGINE
from activities.pages.textlayer import layer_sha256
from activities.scratch import StagingArea
from custody import ids
from custody.errors import Code, Quarantined
from custody.models import OcrInput, OcrResult, PageText
from custody.refs import RefKeys
from custody.settings import Limits
from custody.stores import ObjectStore
from custody.stores.patient import PatientStore

log = structlog.get_logger("custody.activity")


class OcrActivities:
    def __init__(
        self,
        store: ObjectStore,
        area: StagingArea,
        engine: OcrEngine,
        dpi: int,
        page_deadline_s: float = 180.0,
        text_layer: Literal["prefer", "ignore"] = "prefer",
        store_wait_s: float = 60.0,
        lanes: EngineLanes | None = None,
        limits: Limits | None = None,
    ) -> None:
        # A store outage of seconds must not spend OCR's few attempts: wait it
        # out within the attempt, heartbeating (custody.stores.patient).
        self._store = PatientStore(store, store_wait_s, _heartbeat)
        self._refs = RefKeys.for_store(store)
        self._area = area
        self._engine = engine
        self._dpi = dpi
        self._page_deadline_s = page_deadline_s
        self._text_layer = text_layer
        # Shared by every OCR attempt in this worker: only the engine call holds one.
        self._lanes = lanes or EngineLanes(1)
        # The renderer child's pixel, memory and time limits: the policy validation used.
        self._limits = limits or Limits()
        prewarm()  # the renderer's zygote, before the first document needs it

    @activity.defn(name="custody.ocr")
    @coded(Code.OCR_ERROR)
    def recognise(self, inp: OcrInput) -> OcrResult:
        info = activity.info()
        source = self._refs.check(inp.source_key, inp.tenant, inp.sha256, inp.source_sig)
        run = (info.workflow_run_id or "run")[:8]
        done = self._resumable(inp, run)
        activity.heartbeat({"pages_done": len(done)})  # alive before pages load
        started = time.monotonic()
        token = f"{run}-a{info.attempt}"
        with self._area.staged(self._store, source, inp.sha256) as path:
            built: dict[int, bytes] = {}  # searchable PDF pages, from the images OCR saw
            for page, image in self._page_texts(path, inp, len(done), info.attempt):
                key = ids.work_page_key(inp.sha256, inp.tenant, token, page.page)
                self._store.put(key, page.model_dump_json().encode())
                done.append(key)
                if image is not None:
                    built[page.page] = searchable_pdf([(image, page)], self._dpi)
                activity.heartbeat({"pages_done": len(done)})
                fault_point("ocr.after_page")
            if len(done) != inp.pages:
                raise Quarantined(Code.PAGE_COUNT_MISMATCH, f"{len(done)} of {inp.pages} pages")
            pages = load_pages(self._store, done)
            pdf_key = self._searchable(path, inp, pages, built, token)
        result = self._result(done, pages, time.monotonic() - started, info.attempt)
        result = result.model_copy(
            update={
                "page_sigs": self._refs.sign_all(done, inp.tenant, inp.sha256),
                "searchable": "built" if pdf_key else "original",
                "pdf_key": pdf_key,
                "pdf_sig": self._refs.sign(pdf_key, inp.tenant, inp.sha256) if pdf_key else None,
            }
        )
        record(
            self._store,
            inp.tenant,
            "recognised",
            inp.sha256,
            pages=result.pages,
            engine=f"{result.engine} {result.engine_version}",
            text_layer_pages=len(result.text_layer_pages),
        )
        return result

    def _resumable(self, inp: OcrInput, run: str) -> list[str]:
        """Pages earlier attempts of this run finished, from page one on, without a gap.

        The store, not heartbeat details, is the record of progress: heartbeats
        are throttled, so the last one sent before a worker died may be stale.
        """
        prefix = ids.work_prefix(inp.sha256, inp.tenant)
        by_page: dict[int, str] = {}
        for key in self._store.list(prefix):
            attempt_dir, _, name = key[len(prefix) :].partition("/")
            if attempt_dir.startswith(f"{run}-a") and name.startswith("page-"):
                by_page[int(name[5:9])] = key  # a later attempt's copy wins
        done: list[str] = []
        while len(done) in by_page and len(done) < inp.pages:
            done.append(by_page[len(done)])
        if done:
            log.info("ocr_resumed", pages_done=len(done), workflow_id=activity.info().workflow_id)
        return done

    def _page_texts(
        self, path: Path, inp: OcrInput, start: int, attempt: int
    ) -> Iterator[tuple[PageText, GrayPage | None]]:
        """Pages ``start`` onwards, with the image OCR read (None: read from the text layer)."""
        if inp.media_type != PDF or self._text_layer != "prefer":
            pages = iter_pages_sandboxed(path, inp.media_type, self._dpi, start, self._limits)
            for index, image in pages:
                yield self._recognise(image, index, attempt), image
            return
        # Only pages without a text layer are rendered for the engine; the child
        # reads the layers too, so pdfium never opens the document here.
        for index, layer, rendered in iter_layers_sandboxed(path, self._dpi, start, self._limits):
            if layer is not None:
                yield layer.model_copy(update={"source": "text-layer"}), None
            elif rendered is not None:
                yield self._recognise(rendered, index, attempt), rendered

    def _recognise(self, image: GrayPage, index: int, attempt: int) -> PageText:
        def waiting() -> None:
            activity.heartbeat({"pages_done": index, "waiting_for_engine": True})

        with (
            self._lanes.lane(waiting),
            _heartbeat_while(index, self._page_deadline_s),
        ):
            _hang_point(attempt)
            page = self._engine.recognise(image, index)
        # Checkboxes are seen here, where the pixels are: consent is read from them later.
        return page.model_copy(update={"marks": find_marks(image)})

    def _searchable(
        self, path: Path, inp: OcrInput, pages: list[PageText], built: dict[int, bytes], token: str
    ) -> str | None:
        """The searchable PDF's scratch key; None when the original PDF already is one.

        Each page was built as OCR finished it (compressed, so memory holds one
        page image at most); pages an earlier attempt recognised, or that came
        from the text layer of a partly born-digital PDF, are rendered now.
        """
        if inp.media_type == PDF and all(p.source == "text-layer" for p in pages):
            return None
        with (
            _heartbeat_while(len(pages), self._page_deadline_s),
            self._renderer(path, inp.media_type) as render,
        ):
            for page in pages:
                if page.page not in built:
                    built[page.page] = searchable_pdf([(render(page.page), page)], self._dpi)
            data = merge_pdfs(built[p.page] for p in pages)
        key = ids.work_pdf_key(inp.sha256, inp.tenant, token)
        self._store.put(key, data)
        return key

    def _result(
        self, keys: list[str], pages: list[PageText], seconds: float, attempt: int
    ) -> OcrResult:
        layer = [p for p in pages if p.source == "text-layer"]
        ocr_ran = len(layer) < len(pages)
        return OcrResult(
            pages=len(pages),
            page_keys=keys,
            page_confidences=[round(p.mean_confidence, 4) for p in pages],
            mean_confidence=mean_confidence(pages),
            chars=sum(len(p.text) for p in pages),
            # A wholly born-digital PDF never touches the engine, not even its metadata.
            engine=self._engine.name if ocr_ran else TEXT_LAYER_ENGINE,
            engine_version=self._engine.version if ocr_ran else f"pdfium {pdfium.PDFIUM_INFO}",
            params=self._engine.params() if ocr_ran else {"dpi": self._dpi},
            model_hashes=self._engine.model_hashes() if ocr_ran else {},
            seconds=round(seconds, 3),
            attempt=attempt,
            text_layer_pages=[p.page for p in layer],
            text_layer_sha256=[layer_sha256(p) for p in layer],
        )

    @contextmanager
    def _renderer(self, path: Path, media_type: str) -> Iterator[Callable[[int], GrayPage]]:
        """Page ``n``'s image on demand, from the sandboxed child.

        Asked in order, pages come from one child; a page out of step (after
        text-layer pages, say) starts a fresh one there. Any child still
        running at the end is stopped.
        """
        stream: Iterator[tuple[int, GrayPage]] = iter(())
        following = -1

        def render(index: int) -> GrayPage:
            nonlocal stream, following
            if index != following:
                _stop(stream)
                stream = iter_pages_sandboxed(path, media_type, self._dpi, index, self._limits)
            got, image = next(stream, (None, None))
            if got != index or image is None:
                raise Quarantined(Code.PAGE_COUNT_MISMATCH, f"renderer had no page {index}")
            following = index + 1
            return image

        try:
            yield render
        finally:
            _stop(stream)


def _stop(stream: Iterator[tuple[int, GrayPage]]) -> None:
    # The sandboxed stream is a generator: closing it kills a child still rendering.
    if isinstance(stream, Generator):
        stream.close()


def _hang_point(attempt: int) -> None:
    """The ``ocr.hang`` fault point (module docstring); only attempt 1, so a retry can win."""
    for item in os.environ.get("CUSTODY_FAULTS", "").split(","):
        point, _, seconds = item.partition("=")
        if point.strip() == "ocr.hang" and attempt == 1:
            log.warning("fault_point", point="ocr.hang", action=seconds)
            time.sleep(float(seconds))


def _heartbeat_while(pages_done: int, deadline_s: float) -> AbstractContextManager[None]:
    """Heartbeat while one page is recognised, but for at most ``deadline_s``
    (activities.heartbeat: a hung page must look lost, a slow one must not)."""
    details = {"pages_done": pages_done, "page_running": True}
    return heartbeating(details, deadline_s, "page-heartbeat")


def _heartbeat() -> None:
    if activity.in_activity():
        activity.heartbeat()
