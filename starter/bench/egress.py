"""Egress speed: pages per minute of render + watermark + C2PA, and a release's overhead.

Starts its own Temporal dev server (state in a temporary folder) and the I/O
and OCR workers in this process, and publishes a few corpus scans under a fresh
tenant. Then two measures on those published documents:

- **build**: each document's released PDF made by ``activities.egress.build.Job``
  exactly as the render activity makes it, timed whole (``pages_per_minute``),
  and again in its parts from the same staged pages: ``raster_seconds`` (pages
  from the verified source), ``render_seconds`` (the searchable PDF alone),
  ``watermark_seconds`` (the stamped PDF with its identity, less the plain one)
  and ``manifest_seconds`` (signing the C2PA manifest).
- **release**: one real release of all of them through the workflow to an
  outbox, request to delivered. ``share_outside_render`` is ``1 - (render
  activity's seconds in that release's history) / (release seconds)``: what
  prepare, record, delivery, the receipt and Temporal's round trips cost.

Each released file is also weighed against its source and read back
(:mod:`starter.bench.egress_size`): ``size_ratio`` (released bytes over source
bytes, per file under ``files`` and over all of them), ``readback_ok`` (the
printed mark read back on every page) and ``legibility`` (Tesseract word F1
of the released scans against the source pages; ``legibility_lossless`` the
same pages stored as releases were before, to compare with).

With ``--mark-pages N`` (default 2) it also measures the invisible per-recipient
mark (``starter.bench.mark.measure_mark``) on the first N pages: the decode
rate after each transform (JPEG, rescaling, print-and-scan) and false positives.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custody import egress as eg
from custody.errors import Code
from custody.models import DocState
from custody.settings import Settings
from starter.bench import egress_build
from starter.bench.ocr import default_corpus, documents
from starter.cli.output import Exit, fail
from starter.client.connect import CustodyClient
from starter.local.stack import stdout_to_stderr

Figures = dict[str, Any]
_TIMEOUT_S = 900.0


def run(args: argparse.Namespace, settings: Settings) -> int:
    corpus = args.corpus or default_corpus()
    docs = documents(corpus, args.limit) if corpus.is_dir() else []
    if not docs:
        return fail(args.json, Code.USAGE, f"no scans with ground truth under {corpus}", Exit.USAGE)
    with stdout_to_stderr():
        report = asyncio.run(asyncio.wait_for(_bench(docs, args.mark_pages), _TIMEOUT_S))
    report["corpus"] = str(corpus)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, value in report.items():
            print(f"{name:<24} {value}")
    return 0 if report["release_state"] == eg.ReleaseState.DELIVERED else 1


async def _bench(docs: list[Path], mark_pages: int) -> Figures:
    home = Path(tempfile.mkdtemp(prefix="custody-bench-egress-"))
    try:
        async with _stack(home) as client:
            tenant = f"bench-egress-{int(time.time())}"
            print(f"bench egress: publishing {len(docs)} document(s)", file=sys.stderr)
            shas = await publish(client, docs, tenant)
            if not shas:
                raise RuntimeError("no corpus document was published; see the workers' log")
            names = {hashlib.sha256(p.read_bytes()).hexdigest(): p.name for p in docs}
            return await measure(client, tenant, shas, home / "outbox", mark_pages, names)
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def publish(client: CustodyClient, docs: list[Path], tenant: str) -> list[str]:
    """Submit and wait; the SHA-256 of each document that was published."""
    from starter.client.submit import submit, wait

    subs = [await submit(client, path, tenant=tenant) for path in docs]
    results = [await wait(client, s.sha256, tenant=tenant) for s in subs]
    return [r.sha256 for r in results if r.state == DocState.PUBLISHED]


async def measure(
    client: CustodyClient,
    tenant: str,
    shas: list[str],
    outbox: Path,
    mark_pages: int,
    names: dict[str, str] | None = None,
) -> Figures:
    """Both measures on documents already published for ``tenant``; ``names`` labels
    each document's figures by its file (SHA-256 to name), else by its SHA-256."""
    prepared = egress_build.prepared(client.store, tenant, shas)
    build = egress_build.build_all
    built = await asyncio.to_thread(build, client, prepared, mark_pages, names or {})
    released = await _release(client, tenant, shas, outbox)
    outside = 1 - released["render_seconds"] / released["release_seconds"]
    return {
        "documents": len(shas),
        "size_ratio": built["size_ratio"],
        "readback_ok": built["readback_ok"],
        "legibility": built["legibility"],
        "legibility_lossless": built["legibility_lossless"],
        "files": built["files"],
        "pages": built["pages"],
        "pages_per_minute": built["pages_per_minute"],
        "build_seconds": built["build_seconds"],
        "render_seconds": released["render_seconds"],
        "release_seconds": released["release_seconds"],
        "share_outside_render": round(outside, 4),
        "parts": built["parts"],
        "release_steps": released["steps"],
        "release_state": released["state"],
        "mark": built["mark"],
    }


async def _release(client: CustodyClient, tenant: str, shas: list[str], outbox: Path) -> Figures:
    """One real release to an outbox: its wall time and each activity's, from its history."""
    from custody.state.egress import add_recipient
    from starter.client.release import release, wait_release

    now = datetime.now(UTC)
    add_recipient(
        client.store,
        eg.Recipient(
            name="bench-outbox",
            tenant=tenant,
            kind=eg.ChannelKind.OUTBOX,
            target=str(outbox.resolve()),
            created_at=now,
            created_by="bench",
        ),
    )
    started = time.perf_counter()
    begun = await release(client, shas, to="bench-outbox", tenant=tenant, actor="bench")
    result = await wait_release(client, begun.release_id)
    seconds = time.perf_counter() - started
    steps = await activity_seconds(client, begun.workflow_id)
    return {
        "state": result.state.value,
        "release_seconds": round(seconds, 3),
        "render_seconds": steps.get("render", 0.0),
        "steps": steps,
    }


async def activity_seconds(client: CustodyClient, workflow_id: str) -> dict[str, float]:
    """Started -> completed of each activity in a workflow's history, by its short name."""
    from temporalio.api.enums.v1 import EventType

    names: dict[int, str] = {}
    started: dict[int, float] = {}
    seconds: dict[str, float] = {}
    handle = client.temporal.get_workflow_handle(workflow_id)
    async for event in handle.fetch_history_events():
        at = event.event_time.ToDatetime().timestamp()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kind = event.activity_task_scheduled_event_attributes.activity_type.name
            names[event.event_id] = kind.rsplit(".", 1)[-1]
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = at
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            scheduled = event.activity_task_completed_event_attributes.scheduled_event_id
            name = names.get(scheduled, "?")
            seconds[name] = round(seconds.get(name, 0.0) + at - started[scheduled], 3)
    return seconds


@asynccontextmanager
async def _stack(home: Path) -> AsyncIterator[CustodyClient]:
    """A dev server on a free port and both workers in this process (the default engine)."""
    from temporalio.common import SearchAttributeKey
    from temporalio.testing import WorkflowEnvironment

    from activities.engines.selection import build_engine
    from activities.scratch import StagingArea
    from custody.converter import data_converter
    from custody.queues import SEARCH_ATTRIBUTES
    from custody.stores.local import LocalStore
    from starter.local.stack import temporal_binary
    from workers.io import build_io_worker
    from workers.ocr import build_ocr_worker

    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(temporal_binary()),
        search_attributes=[SearchAttributeKey.for_keyword(n) for n in SEARCH_ATTRIBUTES],
        data_converter=data_converter(),
        dev_server_log_level="error",
    )
    try:
        address = str(env.client.service_client.config.target_host)
        settings = Settings(home=home, temporal_address=address)
        store, area = LocalStore(settings.objects_dir), StagingArea(settings.staging_path)
        engine = build_engine(settings)
        async with AsyncExitStack() as workers:
            await workers.enter_async_context(build_io_worker(env.client, settings, store, area))
            ocr = build_ocr_worker(env.client, settings, store, area, engine)
            await workers.enter_async_context(ocr)
            yield CustodyClient(temporal=env.client, store=store, settings=settings)
    finally:
        await env.shutdown()
