"""OCR: recognise every page, heartbeating per page, resuming after a retry.

Runs on the OCR task queue, one document per pool slot. Each finished page is
written to the object store as scratch output of this attempt and reported in
a heartbeat (a count, visible in the UI); a retried attempt (worker lost,
heartbeat timed out) finds the pages earlier attempts of the run wrote and
starts after them instead of from page one. Each attempt writes only under its
own prefix, so an abandoned attempt still running cannot overwrite another's
pages. Text, boxes and confidences stay in the store: only keys and numbers go
back to the workflow.

Fault point ``CUSTODY_FAULTS=ocr.hang=SECONDS`` (chaos harness, off by
default): each page of the first attempt stalls that long before recognition,
so heartbeats stop after the page deadline, as with a hung decoder.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import structlog
from temporalio import activity

from activities.audit import record
from activities.faults import coded, fault_point
from activities.ocr_engine import OcrEngine
from activities.output import mean_confidence
from activities.pages import iter_pages
from activities.scratch import StagingArea
from custody import ids
from custody.errors import Code, Quarantined
from custody.models import OcrInput, OcrResult, PageText
from custody.refs import RefKeys
from custody.stores import ObjectStore

log = structlog.get_logger("custody.activity")


class OcrActivities:
    def __init__(
        self,
        store: ObjectStore,
        area: StagingArea,
        engine: OcrEngine,
        dpi: int,
        page_deadline_s: float = 180.0,
    ) -> None:
        self._store = store
        self._refs = RefKeys.for_store(store)
        self._area = area
        self._engine = engine
        self._dpi = dpi
        self._page_deadline_s = page_deadline_s

    @activity.defn(name="custody.ocr")
    @coded(Code.OCR_ERROR)
    def recognise(self, inp: OcrInput) -> OcrResult:
        info = activity.info()
        source = self._refs.check(inp.source_key, inp.tenant, inp.sha256, inp.source_sig)
        run = (info.workflow_run_id or "run")[:8]
        done = self._resumable(inp, run)
        activity.heartbeat({"pages_done": len(done)})  # alive before pages load
        started = time.monotonic()
        if len(done) < inp.pages:
            with self._area.staged(self._store, source, inp.sha256) as path:
                for index, image in iter_pages(path, inp.media_type, self._dpi, start=len(done)):
                    with _heartbeat_while(len(done), self._page_deadline_s):
                        _hang_point(info.attempt)
                        page = self._engine.recognise(image, index)
                    key = ids.work_page_key(inp.sha256, inp.tenant, f"{run}-a{info.attempt}", index)
                    self._store.put(key, page.model_dump_json().encode())
                    done.append(key)
                    activity.heartbeat({"pages_done": len(done)})
                    fault_point("ocr.after_page")
        if len(done) != inp.pages:
            raise Quarantined(Code.PAGE_COUNT_MISMATCH, f"{len(done)} of {inp.pages} pages")
        result = self._result(done, time.monotonic() - started, info.attempt)
        result = result.model_copy(
            update={"page_sigs": self._refs.sign_all(done, inp.tenant, inp.sha256)}
        )
        record(
            self._store,
            inp.tenant,
            "recognised",
            inp.sha256,
            pages=result.pages,
            engine=f"{result.engine} {result.engine_version}",
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

    def _result(self, keys: list[str], seconds: float, attempt: int) -> OcrResult:
        pages = [PageText.model_validate_json(self._store.get(k)) for k in keys]
        chars = sum(len(p.text) for p in pages)
        confidences = [round(p.mean_confidence, 4) for p in pages]
        return OcrResult(
            pages=len(pages),
            page_keys=keys,
            page_confidences=confidences,
            mean_confidence=mean_confidence(pages),
            chars=chars,
            engine=self._engine.name,
            engine_version=self._engine.version,
            params=self._engine.params(),
            model_hashes=self._engine.model_hashes(),
            seconds=round(seconds, 3),
            attempt=attempt,
        )


def _hang_point(attempt: int) -> None:
    """The ``ocr.hang`` fault point (module docstring); only attempt 1, so a retry can win."""
    for item in os.environ.get("CUSTODY_FAULTS", "").split(","):
        point, _, seconds = item.partition("=")
        if point.strip() == "ocr.hang" and attempt == 1:
            log.warning("fault_point", point="ocr.hang", action=seconds)
            time.sleep(float(seconds))


@contextmanager
def _heartbeat_while(pages_done: int, deadline_s: float, every_s: float = 5.0) -> Iterator[None]:
    """Heartbeat while one page is recognised, but for at most ``deadline_s``.

    A slow page on a busy machine must not look like a lost worker; a hung page
    must. So heartbeats continue during a page only up to its deadline, after
    which they stop and the heartbeat timeout abandons the attempt.
    """
    stop = threading.Event()
    context = contextvars.copy_context()  # the activity context lives in contextvars

    def beat() -> None:
        end = time.monotonic() + deadline_s
        while not stop.wait(every_s) and time.monotonic() < end:
            activity.heartbeat({"pages_done": pages_done, "page_running": True})

    keeper = threading.Thread(target=context.run, args=(beat,), name="page-heartbeat", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        keeper.join()
