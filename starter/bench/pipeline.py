"""The pipeline half of ``custody bench ocr``: a real stack, one document alone and a stream.

The stack is built as ``custody up`` builds it, in a temporary home on free
ports: the Temporal dev server on SQLite and the I/O and OCR workers as their
own processes (``starter.chaos.harness`` starts them from ``starter.local.stack``'s
argv), with a development keyring, so payloads are encrypted and objects
sealed. The OCR worker builds its engine from the same settings as the
benchmark's ``custody`` engine (``CUSTODY_OCR_*``, ``CUSTODY_LIMIT_*`` pass through).

Two measures:

- **alone**: submit -> published for one document with nothing else running;
  its latency, and the seconds outside the OCR activity (end to end less the
  OCR seconds its record states): Temporal round trips, staging, validation,
  check, publish.
- **stream**: every document submitted at once, as a day's scans arrive, wall
  time to the last one published. Each round is timed beside Custody's engine
  reading the same pages one after another in this process, the two
  alternating which goes first, so drift on a shared machine hits both alike.
  ``overhead_share`` is ``1 - engine seconds / pipeline seconds`` for the same
  pages: what the pipeline costs per page around OCR. On a shared machine two
  runs a minute apart differ by more than that, so the overhead is also
  measured inside the pipeline run alone, in two parts that add up:
  ``engine_idle_share``, ``1 - (engine seconds its pages record) / (lanes x
  wall)``, the share of time the engine had no page; and
  ``engine_cpu_wait_share``, the seconds the engine's Tesseract helpers were
  runnable but waited for a core other processes held (the kernel's count,
  ``starter.bench.sched``) over ``lanes x wall``. ``overhead_share_in_run`` is
  their sum.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

from custody.models import DocState, DocumentResult, PageText, SignedRecord
from custody.settings import Settings
from starter.bench.report import Figures
from starter.bench.sched import EngineClock, EngineWatch
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait

#: Engine settings the OCR worker must share with the benchmark's own engine.
_PASSED = ("CUSTODY_OCR_", "CUSTODY_LIMIT_", "CUSTODY_TORCH_")
_SERVICES = ("temporal", "worker-io", "worker-ocr")
_DONE_S = 900.0  # a stream that has not finished by then is a failure, not a figure


@dataclass(frozen=True)
class Pipeline:
    client: CustodyClient
    ocr_worker_pid: int  # the parent of the engine's helpers


@asynccontextmanager
async def pipeline_stack(settings: Settings) -> AsyncIterator[Pipeline]:
    """A throwaway stack of separate processes, as deployed; stopped on exit."""
    from starter.chaos.harness import ChaosStack

    passed = {k: v for k, v in os.environ.items() if k.startswith(_PASSED)}
    passed |= {
        "CUSTODY_OCR_ENGINE": settings.ocr_engine,
        "CUSTODY_OCR_CONCURRENCY": str(settings.ocr_concurrency),
        "CUSTODY_OCR_PREFETCH": str(settings.ocr_prefetch),
        "CUSTODY_TORCH_THREADS": str(settings.torch_threads),
    }
    with tempfile.TemporaryDirectory(prefix="custody-bench-") as tmp:
        stack = ChaosStack(Path(tmp) / "home", env=passed)
        try:
            pids = [await asyncio.to_thread(stack.start, name) for name in _SERVICES]
            yield Pipeline(await CustodyClient.connect(stack.settings), pids[-1])
        finally:
            await asyncio.to_thread(stack.close)


async def alone(client: CustodyClient, path: Path) -> tuple[float, str, Figures]:
    """Submit -> published for one document; its seconds, text and extra figures."""
    tenant = f"bench-{uuid4().hex[:12]}"  # fresh, so no earlier run's record is reused
    started = time.perf_counter()
    sub = await submit(client, path, tenant=tenant)
    result = await wait(client, sub.sha256, tenant=tenant)
    seconds = time.perf_counter() - started
    extra: Figures = {"state": str(result.state)}
    text = ""
    if result.state == DocState.PUBLISHED and result.text_key:
        text = client.store.get(result.text_key).decode("utf-8")
        record = _record(client, result)
        extra["outside_ocr_seconds"] = round(seconds - record.record.ocr_seconds, 3)
    return seconds, text, extra


async def stream(
    pipeline: Pipeline,
    docs: list[Path],
    engine_pass: Callable[[], float],
    rounds: int,
    lanes: int,
) -> Figures:
    """``rounds`` of (pipeline stream, engine alone over the same pages), alternated."""
    done: list[Figures] = []
    for n in range(rounds):
        if n % 2:
            alone_figures = await asyncio.to_thread(_engine_alone, engine_pass)
            piped = await _stream_once(pipeline, docs, lanes)
        else:
            piped = await _stream_once(pipeline, docs, lanes)
            alone_figures = await asyncio.to_thread(_engine_alone, engine_pass)
        engine_s = alone_figures["custody_seconds"]
        share = 1 - engine_s / piped["seconds"] if piped["seconds"] else None
        both = piped | alone_figures | {"overhead_share": _r(share)}
        done.append(both | _steady_total(both, lanes))
    return {
        "documents": len(docs),
        "pages": done[0]["pages"],
        "lanes": lanes,
        "rounds": done,
        "overhead_share_median": _median(r["overhead_share"] for r in done),
        "engine_idle_share_median": _median(r["engine_idle_share"] for r in done),
        "engine_cpu_wait_share_median": _median(r["engine_cpu_wait_share"] for r in done),
        "overhead_share_in_run_median": _median(r["overhead_share_in_run"] for r in done),
        "overhead_share_steady_median": _median(r.get("overhead_share_steady") for r in done),
        "published": min(r["published"] for r in done),
    }


def _steady_total(both: Figures, lanes: int) -> Figures:
    """The steady overhead: the span's idle and CPU-wait shares, plus the lane's extra.

    A page holds its lane for more than its helper's time: the worker hands the
    page over and parses the answer. That part is engine work alone too, but in
    the pipeline it shares a core and the GIL with everything else, so the
    seconds it takes beyond the engine alone's, in the same round, are overhead.
    """
    span = both.get("engine_span_seconds")
    if not span or both.get("outside_helper_seconds") is None:
        return {}
    if both.get("custody_outside_helper_seconds") is None:
        return {}
    extra = max(0.0, both["outside_helper_seconds"] - both["custody_outside_helper_seconds"])
    lane = extra / (lanes * span)
    total = both["steady_engine_idle_share"] + both["steady_cpu_wait_share"] + lane
    return {"steady_lane_share": _r(lane), "overhead_share_steady": _r(total)}


def _engine_alone(engine_pass: Callable[[], float]) -> Figures:
    before = EngineClock.read(os.getpid())
    seconds = engine_pass()
    after = EngineClock.read(os.getpid())
    clock = after.since(before) if after else None
    return {
        "custody_seconds": round(seconds, 3),
        "custody_cpu_seconds": _r(clock[0]) if clock else None,
        "custody_cpu_wait_seconds": _r(clock[1]) if clock else None,
        "custody_outside_helper_seconds": _r(seconds - sum(clock)) if clock else None,
    }


async def _stream_once(pipeline: Pipeline, docs: list[Path], lanes: int) -> Figures:
    client = pipeline.client
    tenant = f"bench-stream-{uuid4().hex[:8]}"
    before = EngineClock.read(pipeline.ocr_worker_pid)
    async with EngineWatch(pipeline.ocr_worker_pid) as watch:
        started = time.perf_counter()
        subs = [await submit(client, path, tenant=tenant) for path in docs]
        waits = (wait(client, s.sha256, tenant=tenant) for s in subs)
        results = await asyncio.wait_for(asyncio.gather(*waits), _DONE_S)
        finished = time.perf_counter()
    seconds = finished - started
    after = EngineClock.read(pipeline.ocr_worker_pid)
    clock = after.since(before) if after else None
    published = [r for r in results if r.state == DocState.PUBLISHED]
    pages = [p for r in published for p in _pages(client, r)]
    # Pages read from a text layer never reached the engine: no lane time.
    engine_s = sum(p.seconds for p in pages if p.source == "ocr")
    idle = 1 - engine_s / (lanes * seconds)
    waited = clock[1] / (lanes * seconds) if clock else None
    return _steady(watch, started, finished, engine_s, clock, lanes) | {
        "pages": sum(r.pages for r in results),
        "seconds": round(seconds, 3),
        "published": len(published),
        "engine_seconds": round(engine_s, 3),
        "engine_cpu_seconds": _r(clock[0]) if clock else None,
        "engine_cpu_wait_seconds": _r(clock[1]) if clock else None,
        "outside_helper_seconds": _r(engine_s - sum(clock)) if clock else None,
        "engine_idle_share": _r(idle),
        "engine_cpu_wait_share": _r(waited),
        "overhead_share_in_run": _r(idle + waited) if waited is not None else None,
    }


def _steady(
    watch: EngineWatch,
    started: float,
    finished: float,
    engine_s: float,
    clock: tuple[float, float] | None,
    lanes: int,
) -> Figures:
    """The stream split into its two ends and the engine's busy span between them."""
    if watch.first is None or watch.last is None or clock is None:
        return {}
    span = watch.last - watch.first
    if span <= 0:
        return {}
    # Page seconds include each page's preparation, a few ms before its helper runs:
    # inside one page's preparation, no idle is measurable, hence the floor at 0.
    idle = max(0.0, 1 - engine_s / (lanes * span))
    waited = clock[1] / (lanes * span)
    return {
        "first_page_after_seconds": round(watch.first - started, 3),
        "after_last_page_seconds": round(finished - watch.last, 3),
        "engine_span_seconds": round(span, 3),
        "steady_engine_idle_share": _r(idle),
        "steady_cpu_wait_share": _r(waited),
    }


def _record(client: CustodyClient, result: DocumentResult) -> SignedRecord:
    return SignedRecord.model_validate_json(client.store.get(result.record_key or ""))


def _pages(client: CustodyClient, result: DocumentResult) -> list[PageText]:
    record = _record(client, result).record
    return [PageText.model_validate(p) for p in json.loads(client.store.get(record.pages_key))]


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _median(values: Any) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 4) if known else None
