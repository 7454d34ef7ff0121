"""The preview lane: a small, bounded OCR pool inside the edge process.

Why here and not on the OCR workers: a preview must answer within seconds and
leave nothing behind, while the worker path is a workflow whose history,
staged objects and ledger entries are exactly what a preview must not create.
Why threads, not processes: every byte of the document is decoded and
rendered in the sandboxed child (``activities.inspect``), and the engines read
outside the GIL (RapidOCR and Tesseract in helper processes of their own,
EasyOCR in torch's native code), so a thread here only waits. One engine, from
``activities.engines.selection.build_engine``, is built once (in the background
as ``custody serve`` starts, else by the first preview) and shared by every
thread; it keeps a helper per page read at once, so no model loads twice.

The lane holds ``preview_concurrency`` previews at work and ``preview_queue``
more waiting. Past that, or when the previews ahead would keep a new one from
finishing within its deadline, a request is refused at once (429
``PREVIEW_BUSY``), with a Retry-After from the measured time of a preview. A
place is given back when the work ends, not when its request does: a preview
whose request passed its deadline stops before its next page (work still
queued never starts), and until then it holds its place, so abandoned work
cannot pile up beyond the bound.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import structlog

from activities.engines.base import OcrEngine
from activities.inspect.sandboxed import iter_pages_sandboxed
from activities.inspect.untrusted import inspect_untrusted, prewarm
from activities.pages.raster import GrayPage
from custody.errors import Code, DocumentRejected, UploadError
from custody.models import PageText
from custody.settings import Limits
from starter.edge.preview_spec import max_side

#: Seconds per preview assumed before one has been measured (one page, two cores).
FIRST_GUESS_S = 3.0
_SMOOTHING = 0.2  # weight of the newest measurement in the running mean
_LOG = structlog.get_logger("custody.edge.preview")


class PreviewLane:
    """``workers`` previews at work and ``queue`` waiting, on one engine built once."""

    def __init__(
        self,
        workers: int,
        queue: int,
        build: Callable[[], OcrEngine],
        deadline_s: float = math.inf,
    ) -> None:
        self.workers, self.capacity, self.deadline_s = workers, workers + queue, deadline_s
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="custody-preview")
        self._build = build
        self._engine: OcrEngine | None = None
        self._engine_lock = threading.Lock()
        self._lock = threading.Lock()  # the count is given back from pool threads
        self.open = 0
        self.mean_s = FIRST_GUESS_S  # one preview's time at work, measured

    def check(self) -> None:
        """Refuse now if a preview would not get in, or not out in time: 429 PREVIEW_BUSY."""
        if self.open >= self.capacity:
            raise self._busy(f"{self.capacity} previews open")
        # A place that cannot answer before the deadline is refused now, not
        # answered 504 once the client has waited the whole deadline for it.
        if self._rounds(self.open + 1) * self.mean_s > self.deadline_s:
            raise self._busy(f"{self.open} previews ahead would pass the deadline")

    async def recognise(
        self, path: Path, media_type: str, limits: Limits, stop: threading.Event
    ) -> tuple[list[PageText], OcrEngine]:
        """The pages of the document at ``path``, recognised on the lane; 429 if it is full."""
        with self._lock:
            self.check()
            self.open += 1
        work = self._pool.submit(self._work, path, media_type, limits, stop)
        work.add_done_callback(self._done)
        # Cancelling the await cancels work still queued; work already running
        # sees ``stop`` (the caller sets it) before its next page.
        return await asyncio.wrap_future(work)

    def engine(self) -> OcrEngine:
        """The one engine, built (and warmed) by :meth:`warm` or the first preview."""
        with self._engine_lock:
            if self._engine is None:
                prewarm()  # the sandbox's zygote, once
                self._engine = self._build()
            return self._engine

    def warm(self) -> None:
        """Build the engine in the background now, so the first preview does not wait for it."""
        threading.Thread(target=self._warm, name="custody-preview-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.engine()
        except Exception as err:  # the first preview tries again, and answers OCR_ERROR
            _LOG.warning("preview_engine_failed", error=type(err).__name__)

    def _work(
        self, path: Path, media_type: str, limits: Limits, stop: threading.Event
    ) -> tuple[list[PageText], OcrEngine]:
        began = time.monotonic()
        inspect_untrusted(path, limits)  # the intake rules, in the sandboxed child
        images = render(path, media_type, limits)
        engine = self.engine()
        pages: list[PageText] = []
        for index, image in images:
            if stop.is_set():  # its request has gone (past the deadline): nobody reads on
                return pages, engine
            pages.append(engine.recognise(image, index))
        with self._lock:
            self.mean_s += _SMOOTHING * (time.monotonic() - began - self.mean_s)
        return pages, engine

    def _done(self, work: Future[Any]) -> None:
        with self._lock:
            self.open -= 1

    def _rounds(self, places: int) -> int:
        """How many previews' time the last of ``places`` open previews takes to finish."""
        return math.ceil(places / self.workers)

    def _busy(self, why: str) -> UploadError:
        # Until the place a new preview needs is free: one round of the lane's work.
        wait = max(1.0, self.mean_s * self._rounds(max(1, self.open - self.workers + 1)))
        return UploadError(429, Code.PREVIEW_BUSY, f"{why}; retry later", wait)


def render(path: Path, media_type: str, limits: Limits) -> list[tuple[int, GrayPage]]:
    """Every page as the OCR stage sees it, rendered in the sandboxed child; sides checked."""
    side = max_side(limits)
    pages = []
    for index, image in iter_pages_sandboxed(path, media_type, limits.ocr_dpi, 0, limits):
        height, width = image.shape
        if max(height, width) > side:
            raise DocumentRejected(Code.PIXEL_LIMIT, f"page side {max(height, width)} px > {side}")
        if index >= limits.max_pages:  # inspection counted them; the renderer must agree
            raise DocumentRejected(Code.PAGE_LIMIT, f"more than {limits.max_pages} pages")
        pages.append((index, image))
    return pages
