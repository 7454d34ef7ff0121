"""Abuse the HTTP edge on loopback while another tenant uploads: is it still served, in time?

Starts its own Temporal dev server and the edge in this process, under
uvicorn configured as ``custody serve`` configures it (its caps made small so
a short run reaches them). Three bounded loops run at once: tenant A's slow
uploads trickling a few bytes a second, tenant C's flood of tiny uploads, and
request heads larger than the edge buffers. Meanwhile tenant B sends one
normal upload, which must be accepted within 2 s. Every loop is bounded in
count and in time, and only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from activities.scratch import StagingArea
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.bench.intake import _lost, _png
from starter.bench.rss import rss_mb, rss_peak
from starter.cli.output import Exit, emit
from starter.client.connect import CustodyClient
from starter.edge import server, tenants
from starter.edge.app import create_app
from starter.local.stack import ephemeral_server

B_WITHIN_S = 2.0
_HOST = "127.0.0.1"
_MAX_HEAD = 8192
_FLOOD_IN_FLIGHT = 16


def run(args: argparse.Namespace, settings: Settings) -> int:
    report = asyncio.run(asyncio.wait_for(_bench(args), args.timeout))
    emit(args, report, "\n".join(f"{name:<24} {value}" for name, value in report.items()))
    return Exit.OK if report["ok"] else Exit.FAILED


async def _bench(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="custody-abuse-"))
    try:
        async with _stack(home) as (client, area, port):
            keys = {
                t: tenants.add(client.store, t)[1] for t in ("tenant-a", "tenant-b", "tenant-c")
            }
            base = rss_mb()
            with rss_peak() as peak:
                deadline = asyncio.get_running_loop().time() + args.seconds
                slow, flood, heads, b = await asyncio.gather(
                    _slow_uploads(port, keys["tenant-a"], args.slow, deadline),
                    _flood(port, keys["tenant-c"], args.flood, deadline),
                    _big_heads(port, args.big_headers, deadline),
                    _tenant_b(port, keys["tenant-b"]),
                )
            await asyncio.sleep(0.5)  # the last cut-off uploads finish their cleanup
            b_shas = [b["sha"]] if b["sha"] else []
            accepted = len(flood["shas"]) + len(b_shas)
            lost = await _lost(client, flood["shas"], "tenant-c")
            lost += await _lost(client, b_shas, "tenant-b")
            left = len(area.files())
    finally:
        shutil.rmtree(home, ignore_errors=True)
    statuses = {"slow": dict(slow), "flood": dict(flood["statuses"]), "headers": dict(heads)}
    server_errors = sum(n for c in statuses.values() for s, n in c.items() if s >= 500)
    report = {
        "b_status": b["status"],
        "b_accept_s": round(b["seconds"], 3),
        "rss_mb_peak": round(base + peak["growth_mb"], 1),
        "rss_growth_mb": round(peak["growth_mb"], 1),
        "statuses": statuses,
        "server_errors": server_errors,
        "accepted": accepted,
        "lost": lost,
        "staging_left": left,
    }
    report["ok"] = (
        b["status"] == 202
        and b["seconds"] <= B_WITHIN_S
        and lost == 0
        and left == 0
        and server_errors == 0
        and peak["growth_mb"] < 256
    )
    return report


@asynccontextmanager
async def _stack(home: Path) -> AsyncIterator[tuple[CustodyClient, StagingArea, int]]:
    """A dev server and the edge on a free loopback port, caps small enough to reach."""
    env = await ephemeral_server()
    settings = Settings(
        home=home,
        temporal_address=str(env.client.service_client.config.target_host),
        admission_max_waiting=10_000,
        edge_max_inflight_per_tenant=4,
        edge_min_body_bytes=1024,
        edge_body_window_s=1.0,
        edge_header_timeout_s=2.0,
        edge_max_header_bytes=_MAX_HEAD,
    )
    client = CustodyClient(
        temporal=env.client, store=LocalStore(settings.objects_dir), settings=settings
    )
    area = StagingArea(settings.staging_path)
    srv = server.Embedded(server.config(create_app(client, area=area), settings, _HOST, 0))
    serving = asyncio.create_task(srv.serve())
    try:
        while not srv.started:
            await asyncio.sleep(0.05)
        yield client, area, srv.servers[0].sockets[0].getsockname()[1]
    finally:
        srv.should_exit = True
        await serving
        await env.shutdown()


def _head(key: str, length: int, extra: str = "") -> bytes:
    lines = ["PUT /v1/documents HTTP/1.1", f"Host: {_HOST}", f"Authorization: Bearer {key}"]
    lines += ["Content-Type: image/png", f"Content-Length: {length}"]
    return ("\r\n".join(lines) + "\r\n" + extra).encode()


async def _exchange(port: int, parts: AsyncIterator[bytes], within_s: float) -> int:
    """Send ``parts`` on a fresh connection until the server answers; its status (0: closed)."""
    reader, writer = await asyncio.open_connection(_HOST, port)

    async def send() -> None:
        async for part in parts:
            writer.write(part)
            await writer.drain()

    sending = asyncio.create_task(send())
    try:
        line = await asyncio.wait_for(reader.readline(), within_s)
        return int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0
    except (TimeoutError, ConnectionError):
        return 0
    finally:
        sending.cancel()
        writer.close()


async def _slow_uploads(port: int, key: str, n: int, deadline: float) -> Counter[int]:
    """``n`` connections, each trickling a 1 MiB upload at 20 bytes/s, again and again."""
    loop, seen = asyncio.get_running_loop(), Counter[int]()

    async def trickle() -> AsyncIterator[bytes]:
        yield _head(key, 1 << 20, "\r\n")
        for _ in range(600):  # 30 s at most, whatever the server does
            await asyncio.sleep(0.5)
            yield b"\x89PNG\r\n\x1a\n\x00\x00"

    async def one() -> None:
        for _ in range(100):
            if loop.time() >= deadline:
                return
            seen[await _exchange(port, trickle(), within_s=30)] += 1

    await asyncio.gather(*(one() for _ in range(n)))
    return seen


async def _flood(port: int, key: str, n: int, deadline: float) -> dict[str, Any]:
    """``n`` tiny uploads, ``_FLOOD_IN_FLIGHT`` at a time, until done or the deadline."""
    loop, seen, shas = asyncio.get_running_loop(), Counter[int](), []
    gate = asyncio.Semaphore(_FLOOD_IN_FLIGHT)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "image/png"}
    async with httpx.AsyncClient(base_url=f"http://{_HOST}:{port}", timeout=30) as http:

        async def one(i: int) -> None:
            async with gate:
                if loop.time() >= deadline:
                    return
                try:
                    resp = await http.put("/v1/documents", content=_png(i), headers=headers)
                except httpx.TransportError:
                    seen[0] += 1  # the connection failed: counted, not fatal
                    return
            seen[resp.status_code] += 1
            if resp.status_code == 202:
                shas.append(resp.json()["sha256"])

        await asyncio.gather(*(one(i) for i in range(n)))
    return {"statuses": seen, "shas": shas}


async def _big_heads(port: int, n: int, deadline: float) -> Counter[int]:
    """``n`` request heads of 64 KiB, sent in 4 KiB pieces: more than the edge buffers."""
    loop, seen = asyncio.get_running_loop(), Counter[int]()

    async def pieces() -> AsyncIterator[bytes]:
        yield _head("x", 10, "X-Pad: ")
        for _ in range(16):
            yield b"a" * 4096
            await asyncio.sleep(0.01)

    for _ in range(n):
        if loop.time() >= deadline:
            break
        seen[await _exchange(port, pieces(), within_s=10)] += 1
    return seen


async def _tenant_b(port: int, key: str) -> dict[str, Any]:
    """Tenant B's one normal upload, a second into the abuse: its status and time."""
    await asyncio.sleep(1.0)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "image/png"}
    async with httpx.AsyncClient(base_url=f"http://{_HOST}:{port}", timeout=30) as http:
        started = time.perf_counter()
        resp = await http.put("/v1/documents", content=_png(1_000_000), headers=headers)
        seconds = time.perf_counter() - started
    sha = resp.json().get("sha256", "") if resp.status_code == 202 else ""
    return {"status": resp.status_code, "seconds": seconds, "sha": sha}
