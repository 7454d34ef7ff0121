"""Replay a burst of uploads against the HTTP edge on loopback; report admission side by side.

Starts its own Temporal dev server (state in a temporary folder) and the edge
on 127.0.0.1 in this process. By default no worker runs, so every accepted
document stays waiting and the admission bounds are what shape the answers;
``--drain`` adds the I/O and OCR workers (the default engine), waits up to the SLO
for the waiting set to empty, and reports the share searchable within it.
It uploads one large generated body first and samples this process's RSS
meanwhile (the edge must stream, not buffer), then the burst.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from PIL import Image, ImageDraw, ImageFont
from temporalio.client import Client
from temporalio.worker import Worker

from activities.scratch import StagingArea
from custody.settings import Limits, Settings
from custody.stores.local import LocalStore
from starter.bench.rss import MB, big_upload
from starter.cli.output import Exit, emit
from starter.client.admission import Admission
from starter.client.connect import CustodyClient
from starter.edge import server, tenants
from starter.edge.app import create_app
from starter.edge.slo import SloTracker
from starter.local.stack import ephemeral_server
from workers.io import build_io_worker
from workers.ocr import build_ocr_worker

_IN_FLIGHT = 16


def run(args: argparse.Namespace, settings: Settings) -> int:
    args.burst = min(args.burst, 5000)  # bounded in count, whatever was asked
    args.slo = args.slo or settings.intake_slo_s
    report = asyncio.run(asyncio.wait_for(_bench(args), args.timeout))
    emit(args, report, "\n".join(f"{name:<28} {value}" for name, value in report.items()))
    ok = report["lost"] == 0 and report["rss_growth_mb"] < 64
    return Exit.OK if ok else Exit.FAILED


async def _bench(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="custody-bench-"))
    try:
        async with _stack(home, args) as (client, admission, slo, base):
            tenant, key = tenants.add(client.store, "bench")
            headers = {"Authorization": f"Bearer {key}"}
            limits = httpx.Limits(max_connections=_IN_FLIGHT)
            async with httpx.AsyncClient(
                base_url=base, headers=headers, timeout=600, limits=limits
            ) as http:
                started = time.perf_counter()
                growth, big_status = await big_upload(http, args.big_mb)
                big_s = time.perf_counter() - started
                async with _queue_age(admission) as age:
                    results = await _burst(http, args)
                    if args.drain:  # give the workers the time the SLO allows, no more
                        await _drained(admission, args.slo)
                await http.get("/metrics")  # the edge counts what was published
            lost = await _lost(client, [r[2] for r in results if r[0] == 202], tenant.name)
            share, published = slo.share, slo.published
    finally:
        shutil.rmtree(home, ignore_errors=True)
    latencies = sorted(r[1] for r in results)
    return {
        "burst": args.burst,
        "arrival_rate_per_s": args.rate,
        "max_waiting": args.max_waiting,
        "accepted_202": sum(1 for r in results if r[0] == 202),
        "rejected_429": sum(1 for r in results if r[0] == 429),
        "other_status": sum(1 for r in results if r[0] not in (202, 429)),
        "lost": lost,
        "p50_admission_ms": _ms(latencies, 0.50),
        "p99_admission_ms": _ms(latencies, 0.99),
        "p50_202_ms": _ms(sorted(r[1] for r in results if r[0] == 202), 0.50),
        "p50_429_ms": _ms(sorted(r[1] for r in results if r[0] == 429), 0.50),
        "max_queue_age_s": round(age["max_s"], 2),
        "intake_slo_s": args.slo,
        "queue_age_within_slo": age["max_s"] <= args.slo,
        "published_in_run": published,
        "searchable_within_slo": "n/a (none published)" if share is None else round(share, 3),
        "big_upload_mb": args.big_mb,
        "big_upload_status": big_status,
        "big_upload_s": round(big_s, 2),
        "big_upload_mb_per_s": round(args.big_mb / big_s, 1),
        "rss_growth_mb": round(growth, 1),
        "rss_ok_(<64MB)": growth < 64,
    }


@asynccontextmanager
async def _stack(
    home: Path, args: argparse.Namespace
) -> AsyncIterator[tuple[CustodyClient, Admission, SloTracker, str]]:
    env = await ephemeral_server()
    settings = Settings(
        home=home,
        temporal_address=str(env.client.service_client.config.target_host),
        admission_max_waiting=args.max_waiting,
        admission_refresh_s=0.25,
        admission_max_bytes=(args.big_mb + 64) * MB * 2,
        intake_slo_s=args.slo,
        limits=Limits(max_bytes=(args.big_mb + 1) * MB),
    )
    store = LocalStore(settings.objects_dir)
    client = CustodyClient(temporal=env.client, store=store, settings=settings)
    admission = client.admission
    app = create_app(client)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    web = server.Embedded(config)
    serving = asyncio.create_task(web.serve())
    try:
        while not web.started:
            await asyncio.sleep(0.05)
        port = web.servers[0].sockets[0].getsockname()[1]
        slo = app.state.edge.slo
        async with AsyncExitStack() as workers:
            if args.drain:
                for worker in _workers(env.client, settings, store):
                    await workers.enter_async_context(worker)
            yield client, admission, slo, f"http://127.0.0.1:{port}"
    finally:
        web.should_exit = True
        await serving
        await env.shutdown()


def _workers(client: Client, settings: Settings, store: LocalStore) -> list[Worker]:
    from activities.engines.selection import build_engine  # models: only when asked to drain

    area = StagingArea(settings.staging_path)
    engine = build_engine(settings)
    return [
        build_io_worker(client, settings, store, area),
        build_ocr_worker(client, settings, store, area, engine),
    ]


@asynccontextmanager
async def _queue_age(admission: Admission) -> AsyncIterator[dict[str, float]]:
    """The oldest waiting document's age, sampled each 0.25 s; ``max_s`` is the worst seen."""
    out = {"max_s": 0.0}

    async def sample() -> None:
        while True:
            stats = await admission.refresh()
            out["max_s"] = max(out["max_s"], stats.oldest_age_s)
            await asyncio.sleep(0.25)

    task = asyncio.create_task(sample())
    try:
        yield out
    finally:
        task.cancel()
        out["max_s"] = max(out["max_s"], (await admission.refresh(force=True)).oldest_age_s)


async def _drained(admission: Admission, within_s: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while loop.time() < deadline and (await admission.refresh(force=True)).documents:
        await asyncio.sleep(1.0)


async def _burst(http: httpx.AsyncClient, args: argparse.Namespace) -> list[tuple[int, float, str]]:
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    # httpcore's pool degrades quadratically with hundreds of queued requests
    # in one process; a bounded number in flight keeps the client out of the figures.
    in_flight = asyncio.Semaphore(_IN_FLIGHT)

    async def one(i: int) -> tuple[int, float, str]:
        await asyncio.sleep(max(0.0, t0 + i / args.rate - loop.time()))
        body = _png(i)
        headers = {"Content-Type": "image/png", "Custody-Source-Id": f"bench-{i % args.sources}"}
        async with in_flight:
            started = time.perf_counter()
            resp = await http.post("/v1/documents", content=body, headers=headers)
            elapsed = time.perf_counter() - started
        sha = resp.json().get("sha256", "") if resp.status_code == 202 else ""
        return resp.status_code, elapsed, sha

    return list(await asyncio.gather(*(one(i) for i in range(args.burst))))


def _png(seed: int) -> bytes:
    """A small page with a line of text (OCR has something to read when draining)."""
    img = Image.new("L", (360, 60), 255)
    font = ImageFont.load_default(size=28)
    ImageDraw.Draw(img).text((10, 12), f"REFERRAL {seed:06d}", fill=0, font=font)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


async def _lost(client: CustodyClient, shas: list[str], tenant: str) -> int:
    """Accepted documents with no workflow behind them (must be 0)."""
    lost = 0
    for sha in shas:
        try:
            await client.handle(sha, tenant).describe()
        except Exception:
            lost += 1
    return lost


def _ms(values: list[float], q: float) -> float:
    """The q-quantile of sorted seconds, in milliseconds (0 when there are none)."""
    if not values:
        return 0.0
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 1)
