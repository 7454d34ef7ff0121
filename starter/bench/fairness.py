"""Is a quiet tenant still served while another floods the queue?

Starts its own dev server (fairness on, one partition) and the real workers in
this process, on small synthetic one-line pages so OCR costs little and the
queue's order is what is measured. Tenant B submits ``--b-docs`` documents
alone (solo); then tenant A submits ``--ratio`` times as many at once, and B
its documents right behind them (contended). For each of B's documents,
admission-to-start is the time from its workflow's start (admission) to its
OCR attempt starting, read from the workflow's history. Target: B's p95 under
A's load at most twice its p95 alone. With ``--compare-off`` the contended
phase runs again on a dev server without fairness (first come, first served),
with the same solo figure as its base: what fairness buys.

Weights are not set here: ``submit`` gives each document the weight its
tenant's backlog earns (``custody.queues.backlog_weight``), so A's burst past
its fair share weighs less and B's few documents are served ahead of it. The
report shows the lowest weight each tenant's documents carried.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory

from activities.engines.base import OcrEngine
from activities.engines.selection import build_engine
from activities.scratch import StagingArea
from custody import ids
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.cli.output import Exit, emit
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from starter.local.stack import ephemeral_server
from workers.io import build_io_worker
from workers.logging import configure_logging
from workers.ocr import build_ocr_worker

TARGET_RATIO = 2.0
_OCR = "custody.ocr"


@dataclass(frozen=True)
class Timing:
    """Seconds from admission: to the OCR task queued (the I/O steps), to it started;
    and the fairness weight the document was started with (0.0: the default)."""

    start: float
    queued: float
    weight: float = 0.0


def run(args: argparse.Namespace, settings: Settings) -> int:
    configure_logging(settings)  # the workers' lines to stderr: stdout is the report
    report = asyncio.run(asyncio.wait_for(_bench(args), args.timeout))
    emit(args, report, "\n".join(f"{k:<26} {v}" for k, v in report.items()))
    return Exit.OK


async def _bench(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="custody-fairness-"))
    started = time.monotonic()
    try:
        engine = build_engine(Settings(home=home, ocr_engine=args.engine, ocr_concurrency=1))
        solo, contended, heavy = await _phases(home / "on", engine, args, fairness=True)
        report = _report(solo, contended, args)
        report["a_weight_min"] = min((t.weight for t in heavy), default=None)
        report["b_weight_min"] = min((t.weight for t in contended), default=None)
        if args.compare_off:
            _, off, _ = await _phases(home / "off", engine, args, fairness=False, solo=False)
            report["off_contended_p50_s"] = _pct(off, 50)
            report["off_contended_p95_s"] = _pct(off, 95)
            report["off_ratio"] = _ratio(_pct(off, 95), report["solo_p95_s"])
        report["seconds"] = round(time.monotonic() - started, 1)
        return report
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _report(
    solo: list[Timing], contended: list[Timing], args: argparse.Namespace
) -> dict[str, Any]:
    solo_p95, contended_p95 = _pct(solo, 95), _pct(contended, 95)
    ratio = _ratio(contended_p95, solo_p95)
    return {
        "engine": args.engine,
        "a_docs": args.b_docs * args.ratio,
        "b_docs": args.b_docs,
        "solo_n": len(solo),
        "contended_n": len(contended),
        "solo_p50_s": _pct(solo, 50),
        "solo_p95_s": solo_p95,
        "contended_p50_s": _pct(contended, 50),
        "contended_p95_s": contended_p95,
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "target_met": ratio is not None and ratio <= TARGET_RATIO,
        # Where B's time went: the I/O steps before OCR was queued, then the OCR queue.
        "solo_io_p95_s": _pct(solo, 95, "queued"),
        "contended_io_p95_s": _pct(contended, 95, "queued"),
    }


async def _phases(
    home: Path, engine: OcrEngine, args: argparse.Namespace, *, fairness: bool, solo: bool = True
) -> tuple[list[Timing], list[Timing], list[Timing]]:
    """B's admission-to-start alone (when ``solo``) and behind A's burst; A's in it."""
    env = await ephemeral_server(fairness=fairness)
    settings = Settings(
        home=home,
        temporal_address=str(env.client.service_client.config.target_host),
        io_task_queue=f"fair-io-{home.name}",
        ocr_task_queue=f"fair-ocr-{home.name}",
        ocr_engine=args.engine,
        ocr_concurrency=1,
        ocr_prefetch=0,  # an OCR start then means the engine was free for it
        # Fairness orders the queue, not the CPU: slots beyond the cores would move
        # the backlog out of the fair queue into the kernel's run queue.
        io_concurrency=args.io_slots,
        confidence_floor=0.0,  # one-line synthetic pages: every document publishes
    )
    store = LocalStore(settings.objects_dir)
    client = CustodyClient(temporal=env.client, store=store, settings=settings)
    area = StagingArea(settings.staging_path)
    try:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(build_io_worker(env.client, settings, store, area))
            ocr = build_ocr_worker(env.client, settings, store, area, engine)
            await stack.enter_async_context(ocr)
            alone = await _burst(client, {"tenant-b": args.b_docs}, 0) if solo else {}
            both = await _burst(
                client, {"tenant-a": args.b_docs * args.ratio, "tenant-b": args.b_docs}, 1
            )
        return alone.get("tenant-b", []), both["tenant-b"], both["tenant-a"]
    finally:
        await env.shutdown()


async def _burst(
    client: CustodyClient, counts: dict[str, int], seed: int
) -> dict[str, list[Timing]]:
    """Submit each tenant's documents at once, in order; each one's admission-to-start."""
    subs: dict[str, list[str]] = {}
    for tenant, n in counts.items():
        subs[tenant] = [
            (await submit(client, _page(f"{tenant}-{seed}-{i}"), tenant=tenant)).sha256
            for i in range(n)
        ]
    out: dict[str, list[Timing]] = {}
    for tenant, shas in subs.items():
        runs = [(await wait(client, sha, tenant=tenant)).run_id for sha in shas]
        out[tenant] = [
            await _admission_to_start(client, sha, tenant, run)
            for sha, run in zip(shas, runs, strict=True)
        ]
    return out


async def _admission_to_start(client: CustodyClient, sha: str, tenant: str, run_id: str) -> Timing:
    """Workflow started (admitted) to OCR queued and started, from the history's own clock."""
    history = await _document_run(client, ids.workflow_id(sha, tenant), run_id)
    admitted = history.events[0].event_time.ToDatetime()
    started = history.events[0].workflow_execution_started_event_attributes
    weight = round(started.priority.fairness_weight, 3)
    queued: dict[int, float] = {}
    for event in history.events:
        since = (event.event_time.ToDatetime() - admitted).total_seconds()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if event.activity_task_scheduled_event_attributes.activity_type.name == _OCR:
                queued[event.event_id] = since
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            at = queued.get(event.activity_task_started_event_attributes.scheduled_event_id)
            if at is not None:
                return Timing(start=since, queued=at, weight=weight)
    raise RuntimeError(f"document {sha[:12]} never started OCR")


async def _document_run(client: CustodyClient, workflow_id: str, run_id: str) -> WorkflowHistory:
    """The first run of the chain ``run_id`` ends: the document's own run, not the review or
    outcome run it continued as (each names the run it continued from)."""
    while True:
        handle = client.temporal.get_workflow_handle(workflow_id, run_id=run_id)
        history = await handle.fetch_history()
        started = history.events[0].workflow_execution_started_event_attributes
        if not started.continued_execution_run_id:
            return history
        run_id = started.continued_execution_run_id


def _page(label: str) -> bytes:
    """A one-line synthetic page, distinct per document (its own bytes, its own workflow)."""
    img = Image.new("L", (420, 60), 255)
    ImageDraw.Draw(img).text((10, 12), label.upper(), fill=0, font=ImageFont.load_default(28))
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def _pct(timings: list[Timing], q: int, field: str = "start") -> float | None:
    """Nearest-rank percentile of one field, in seconds to the millisecond."""
    if not timings:
        return None
    ranked: list[float] = sorted(getattr(t, field) for t in timings)
    return round(ranked[max(0, -(-q * len(ranked) // 100) - 1)], 3)


def _ratio(num: float | None, den: float | None) -> float | None:
    return round(num / den, 2) if num is not None and den else None
