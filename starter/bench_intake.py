"""Replay a burst of uploads against the HTTP edge on loopback; report admission side by side.

Starts its own Temporal dev server (state in a temporary folder) and the edge
on 127.0.0.1 in this process. By default no worker runs, so every accepted
document stays waiting and the admission bounds are what shape the answers;
``--drain`` adds the I/O worker so rejected-as-corrupt bench bodies drain.
It uploads one large generated body first and samples this process's RSS
meanwhile (the edge must stream, not buffer), then the burst.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from PIL import Image
from temporalio.common import SearchAttributeKey
from temporalio.testing import WorkflowEnvironment

from activities.scratch import StagingArea
from custody.converter import data_converter
from custody.queues import SEARCH_ATTRIBUTES
from custody.settings import Limits, Settings
from custody.stores.local import LocalStore
from starter import tenants
from starter.api import CustodyClient, _handle
from starter.edge import create_app
from starter.stack import temporal_binary
from workers.io import build_io_worker

_MB = 1 << 20
_IN_FLIGHT = 16


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", type=int, default=300, help="documents in the burst")
    parser.add_argument("--rate", type=float, default=200.0, help="arrivals per second")
    parser.add_argument("--sources", type=int, default=4, help="distinct source ids")
    parser.add_argument("--max-waiting", type=int, default=100, help="admission bound")
    parser.add_argument("--big-mb", type=int, default=200, help="size of the large upload")
    parser.add_argument("--drain", action="store_true", help="run the I/O worker too")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds, all in")


def run(args: argparse.Namespace, settings: Settings) -> int:
    args.burst = min(args.burst, 5000)  # bounded in count, whatever was asked
    report = asyncio.run(asyncio.wait_for(_bench(args), args.timeout))
    for name, value in report.items():
        print(f"{name:<28} {value}")
    ok = report["lost"] == 0 and report["rss_growth_mb"] < 64
    return 0 if ok else 1


async def _bench(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="custody-bench-"))
    try:
        async with _stack(home, args) as (client, base):
            tenant, key = tenants.add(client.store, "bench")
            headers = {"Authorization": f"Bearer {key}"}
            limits = httpx.Limits(max_connections=_IN_FLIGHT)
            async with httpx.AsyncClient(
                base_url=base, headers=headers, timeout=120, limits=limits
            ) as http:
                growth, big_status = await _big_upload(http, args.big_mb)
                results = await _burst(http, args)
            lost = await _lost(client, [r[2] for r in results if r[0] == 202], tenant.name)
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
        "big_upload_mb": args.big_mb,
        "big_upload_status": big_status,
        "rss_growth_mb": round(growth, 1),
        "rss_ok_(<64MB)": growth < 64,
    }


@asynccontextmanager
async def _stack(home: Path, args: argparse.Namespace) -> AsyncIterator[tuple[CustodyClient, str]]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(temporal_binary()),
        search_attributes=[SearchAttributeKey.for_keyword(n) for n in SEARCH_ATTRIBUTES],
        data_converter=data_converter(),
        dev_server_log_level="error",
    )
    settings = Settings(
        home=home,
        temporal_address=str(env.client.service_client.config.target_host),
        admission_max_waiting=args.max_waiting,
        admission_refresh_s=0.25,
        limits=Limits(max_bytes=(args.big_mb + 1) * _MB),
    )
    store = LocalStore(settings.objects_dir)
    client = CustodyClient(temporal=env.client, store=store, settings=settings)
    config = uvicorn.Config(create_app(client), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        worker = build_io_worker(env.client, settings, store, StagingArea(settings.staging_path))
        if args.drain:
            async with worker:
                yield client, f"http://127.0.0.1:{port}"
        else:
            yield client, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        await env.shutdown()


async def _big_upload(http: httpx.AsyncClient, big_mb: int) -> tuple[float, int]:
    """RSS growth (MB) of this process while one large body streams through the edge."""

    async def body() -> AsyncIterator[bytes]:
        chunk = bytearray(os.urandom(_MB))
        for i in range(big_mb):
            chunk[:8] = b"%PDF-1.7" if i == 0 else i.to_bytes(8, "big")
            yield bytes(chunk)

    with _rss_peak() as peak:
        headers = {"Content-Type": "application/pdf", "Content-Length": str(big_mb * _MB)}
        resp = await http.put("/v1/documents", content=body(), headers=headers)
    return peak["growth_mb"], resp.status_code


@contextmanager
def _rss_peak() -> Iterator[dict[str, float]]:
    out: dict[str, float] = {"growth_mb": 0.0}
    base, stop = _rss_mb(), threading.Event()

    def sample() -> None:
        while not stop.wait(0.01):
            out["growth_mb"] = max(out["growth_mb"], _rss_mb() - base)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / _MB


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
    rng = random.Random(seed)
    img = Image.new("L", (32, 32), 255)
    img.putdata([rng.randrange(256) for _ in range(32 * 32)])
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


async def _lost(client: CustodyClient, shas: list[str], tenant: str) -> int:
    """Accepted documents with no workflow behind them (must be 0)."""
    lost = 0
    for sha in shas:
        try:
            await _handle(client, sha, tenant).describe()
        except Exception:
            lost += 1
    return lost


def _ms(values: list[float], q: float) -> float:
    """The q-quantile of sorted seconds, in milliseconds (0 when there are none)."""
    if not values:
        return 0.0
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 1)
