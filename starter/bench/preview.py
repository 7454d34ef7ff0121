"""Latency of ``POST /v1/preview``: one page, p50 and p95 at each concurrency, 429s apart.

Starts its own Temporal dev server, both workers in this process (a preview
is read on the OCR worker, through a short workflow the I/O worker runs) and
the edge under uvicorn as ``custody serve`` configures it, with this
deployment's preview settings and engine (``CUSTODY_PREVIEW_*``,
``CUSTODY_OCR_ENGINE``). The engine is loaded before the OCR worker polls, as
the worker loads it (``engine_load_s``), and the first preview is reported on
its own (``cold_s``). Then, at each concurrency,
that many clients send the page back to back until ``--requests`` have been
sent: a 200's time is a latency; a 429 (the preview lane full) is counted
apart, with the Retry-After it carried, and not retried. Only 127.0.0.1 is
contacted, and nothing may be left in the store or the staging folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from activities.scratch import StagingArea
from custody.errors import Code
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.bench.ocr import default_corpus, documents
from starter.cli.output import Exit, emit, fail
from starter.client.connect import CustodyClient
from starter.edge import server, tenants
from starter.edge.app import create_app
from starter.local.stack import ephemeral_server
from workers.io import build_io_worker
from workers.logging import configure_logging
from workers.ocr import build_ocr_worker

_HOST = "127.0.0.1"
_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".tif": "image/tiff"}


def run(args: argparse.Namespace, settings: Settings) -> int:
    page = args.page or _default_page()
    if page is None or not page.is_file() or page.suffix.lower() not in _TYPES:
        return fail(args.json, Code.USAGE, f"no one-page scan at {page}", Exit.USAGE)
    report = asyncio.run(asyncio.wait_for(_bench(args, page), args.timeout))
    lines = [f"{name:<22} {value}" for name, value in report.items() if name != "levels"]
    emit(args, report, "\n".join(lines))
    return Exit.OK if report["ok"] else Exit.FAILED


def _default_page() -> Path | None:
    corpus = default_corpus()
    scans = documents(corpus, None) if corpus.is_dir() else []
    return next((p for p in scans if p.suffix.lower() in _TYPES), None)


async def _bench(args: argparse.Namespace, page: Path) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="custody-preview-"))
    body = page.read_bytes()
    headers = {"Content-Type": _TYPES[page.suffix.lower()]}
    try:
        async with _stack(home) as (client, port, load_s):
            headers["Authorization"] = f"Bearer {tenants.add(client.store, 'bench')[1]}"
            kept = _files(client.settings)
            async with httpx.AsyncClient(base_url=f"http://{_HOST}:{port}", timeout=300) as http:
                cold = await _one(http, body, headers)
                levels = {
                    str(c): await _level(http, body, headers, c, args.requests)
                    for c in args.concurrency
                }
            left = sorted(_files(client.settings) - kept)
            s = client.settings
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {"engine_load_s": round(load_s, 3)} | _report(page, s, cold, levels, left)


def _report(
    page: Path, s: Settings, cold: tuple[int, float, Any], levels: dict[str, Any], left: list[str]
) -> dict[str, Any]:
    report: dict[str, Any] = {
        "page": page.name,
        "engine": s.ocr_engine,
        "preview_concurrency": s.preview_concurrency,
        "preview_queue": s.preview_queue,
        "deadline_s": s.preview_deadline_s,
        "cold_status": cold[0],
        "cold_s": round(cold[1], 3),
    }
    for c, level in levels.items():
        report |= {f"c{c}_p50_s": level["p50_s"], f"c{c}_p95_s": level["p95_s"]}
        report |= {f"c{c}_ok": level["ok"], f"c{c}_429": level["rejected_429"]}
    others = sum(sum(level["other"].values()) for level in levels.values())
    report |= {"levels": levels, "files_left": len(left)}
    report["ok"] = cold[0] == 200 and others == 0 and not left
    return report


async def _one(
    http: httpx.AsyncClient, body: bytes, headers: dict[str, str]
) -> tuple[int, float, str | None]:
    started = time.perf_counter()
    resp = await http.post("/v1/preview", content=body, headers=headers)
    return resp.status_code, time.perf_counter() - started, resp.headers.get("retry-after")


async def _level(
    http: httpx.AsyncClient, body: bytes, headers: dict[str, str], clients: int, requests: int
) -> dict[str, Any]:
    """``clients`` closed loops sharing ``requests`` sends; latencies of the 200s."""
    left, seen = [requests], []
    started = time.perf_counter()

    async def client() -> None:
        while left[0] > 0:
            left[0] -= 1
            seen.append(await _one(http, body, headers))

    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - started
    ok = [seconds for status, seconds, _ in seen if status == 200]
    busy = [int(after or 0) for status, _, after in seen if status == 429]
    other = Counter(str(status) for status, _, _ in seen if status not in (200, 429))
    return {
        "requests": len(seen),
        "ok": len(ok),
        "p50_s": round(float(np.percentile(ok, 50)), 3) if ok else None,
        "p95_s": round(float(np.percentile(ok, 95)), 3) if ok else None,
        "rejected_429": len(busy),
        "retry_after_s_max": max(busy, default=None),
        "other": dict(other),
        "pages_per_minute": round(60 * len(ok) / wall, 1),
    }


def _files(settings: Settings) -> set[str]:
    """Every file under the store and the staging folder."""
    roots = (settings.objects_dir, settings.staging_path)
    return {os.path.join(d, n) for r in roots for d, _, names in os.walk(r) for n in names}


@asynccontextmanager
async def _stack(home: Path) -> AsyncIterator[tuple[CustodyClient, int, float]]:
    """A dev server, both workers and the edge on a free port; the engine loaded first."""
    from activities.engines.selection import build_engine  # the model: only when benched

    env = await ephemeral_server()
    address = str(env.client.service_client.config.target_host)
    settings = Settings(home=home, temporal_address=address)
    configure_logging(settings)  # the workers' lines to stderr: stdout is the report
    store = LocalStore(settings.objects_dir)
    client = CustodyClient(temporal=env.client, store=store, settings=settings)
    started = time.perf_counter()
    engine = await asyncio.to_thread(build_engine, settings)
    load_s = time.perf_counter() - started
    area = StagingArea(settings.staging_path)
    srv = server.Embedded(server.config(create_app(client), settings, _HOST, 0))
    try:
        async with AsyncExitStack() as workers:
            await workers.enter_async_context(build_io_worker(env.client, settings, store, area))
            ocr = build_ocr_worker(env.client, settings, store, area, engine)
            await workers.enter_async_context(ocr)
            serving = asyncio.create_task(srv.serve())
            try:
                while not srv.started:
                    await asyncio.sleep(0.05)
                yield client, srv.servers[0].sockets[0].getsockname()[1], load_s
            finally:
                srv.should_exit = True
                await serving
    finally:
        await env.shutdown()
