"""The edge's caps under abuse: uploads in flight per tenant, slow clients, a bounded manual lane.

Slow clients are real: a raw socket against uvicorn on loopback, configured as
``custody serve`` configures it, trickling bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import uvicorn
from temporalio.client import Client

from activities.scratch import StagingArea
from custody.errors import ConfigurationError
from starter.cli import serve
from starter.edge import manual, server
from tests.starter.edge.conftest import EdgeHarness, SettingsFactory, custody_client, png

EdgeFactory = Callable[..., EdgeHarness]
PNG = {"Content-Type": "image/png"}
# Past one small upload the waiting-bytes bound sends the rest to the manual lane
# (waiting_bytes, so test_lanes' count of waiting_documents parks stays its own).
_LANE = {"admission_max_bytes": len(png(0)) * 3 // 2, "admission_manual_lane": True}


async def _held(body: bytes, gate: asyncio.Event) -> AsyncIterator[bytes]:
    """``body`` in two parts, the second only once ``gate`` opens: an upload held open."""
    yield body[:16]
    await gate.wait()
    yield body[16:]


async def test_edge_caps_uploads_in_flight_per_tenant(edge_for: EdgeFactory, tenant: str) -> None:
    """Past its open uploads a tenant gets 429 INFLIGHT_UPLOADS; another tenant goes on."""
    async with edge_for(edge_max_inflight_per_tenant=2) as edge:
        auth, gate = {**edge.tenant(tenant), **PNG}, asyncio.Event()
        held = [
            asyncio.create_task(
                edge.http.put("/v1/documents", content=_held(png(800 + i), gate), headers=auth)
            )
            for i in range(2)
        ]
        area = StagingArea(edge.client.settings.staging_path)
        for _ in range(500):  # both bodies streaming into the sweeper's staging area
            if len(area.files()) == 2:
                break
            await asyncio.sleep(0.01)
        staging = len(area.files())
        third = await edge.http.put("/v1/documents", content=png(802), headers=auth)
        other = await edge.http.put(
            "/v1/documents", content=png(803), headers={**edge.tenant(f"{tenant}-b"), **PNG}
        )
        gate.set()
        finished = [(await t).status_code for t in held]
        left = [k for k in edge.leftovers() if not k.startswith("intake/")]
    assert staging == 2
    assert (third.status_code, third.json()["error"]) == (429, "INFLIGHT_UPLOADS")
    assert int(third.headers["retry-after"]) >= 1
    assert other.status_code == 202 and finished == [202, 202] and left == []


async def test_edge_caps_declared_bytes_in_flight_per_tenant(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """A Content-Length past the tenant's in-flight bytes is 429 INFLIGHT_BYTES before the body."""
    body = png(810)
    async with edge_for(edge_max_inflight_bytes_per_tenant=len(body) - 1) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        resp = await edge.http.put("/v1/documents", content=body, headers=auth)
        left = edge.leftovers()
    assert (resp.status_code, resp.json()["error"]) == (429, "INFLIGHT_BYTES")
    assert "retry-after" in resp.headers and left == []


async def test_edge_caps_streamed_bytes_in_flight_per_tenant(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """A body without Content-Length is counted as it streams, and cut off past the cap."""
    body = png(811)

    async def chunked() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 64):
            yield body[i : i + 64]

    async with edge_for(edge_max_inflight_bytes_per_tenant=len(body) // 2) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        resp = await edge.http.put("/v1/documents", content=chunked(), headers=auth)
        left = edge.leftovers()
    assert (resp.status_code, resp.json()["error"]) == (429, "INFLIGHT_BYTES")
    assert left == []


async def test_edge_manual_lane_is_bounded_per_tenant(edge_for: EdgeFactory, tenant: str) -> None:
    """A tenant's full share of the manual lane is 429 MANUAL_LANE_FULL; another's still parks."""
    async with edge_for(**_LANE, admission_manual_max_per_tenant=2) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        answers = [
            await edge.http.put("/v1/documents", content=png(820 + i), headers=auth)
            for i in range(4)
        ]
        other = await edge.http.put(
            "/v1/documents", content=png(830), headers={**edge.tenant(f"{tenant}-b"), **PNG}
        )
        parked = manual.tenant_notes(edge.client.store, tenant)
        left = [k for k in edge.leftovers() if not k.startswith("intake/")]
    assert [r.json().get("state") for r in answers[:3]] == ["accepted", "manual", "manual"]
    assert (answers[3].status_code, answers[3].json()["error"]) == (429, "MANUAL_LANE_FULL")
    assert int(answers[3].headers["retry-after"]) >= 1
    assert len(parked) == 2 and left == []
    assert other.status_code == 202 and other.json()["state"] == "manual"


async def test_edge_manual_lane_bounds_bytes_per_tenant(edge_for: EdgeFactory, tenant: str) -> None:
    """A park that would take the tenant's parked bytes past the bound is refused."""
    size = len(png(841))
    async with edge_for(**_LANE, admission_manual_max_bytes_per_tenant=size + 10) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        answers = [
            await edge.http.put("/v1/documents", content=png(840 + i), headers=auth)
            for i in range(3)
        ]
    assert [r.status_code for r in answers] == [202, 202, 429]
    assert answers[2].json()["error"] == "MANUAL_LANE_FULL"


@asynccontextmanager
async def _served(edge: EdgeHarness) -> AsyncIterator[int]:
    """The harness's app under uvicorn on a loopback port, configured as ``custody serve`` does."""
    srv = uvicorn.Server(server.config(edge.app, edge.client.settings, "127.0.0.1", 0))
    serving = asyncio.create_task(srv.serve())
    while not srv.started:
        await asyncio.sleep(0.02)
    try:
        yield srv.servers[0].sockets[0].getsockname()[1]
    finally:
        srv.should_exit = True
        await serving


async def _trickle(port: int, head: bytes, body: bytes, every_s: float) -> tuple[bytes, float]:
    """Send ``head`` at once, then ``body`` 4 bytes per ``every_s``; the answer and its time."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()

    async def send() -> None:
        writer.write(head)
        for i in range(0, len(body), 4):
            await asyncio.sleep(every_s)
            writer.write(body[i : i + 4])
            await writer.drain()

    sending = asyncio.create_task(send())
    try:
        answer = await asyncio.wait_for(reader.read(65536), timeout=20)
    finally:
        sending.cancel()
        writer.close()
    return answer, time.monotonic() - started


def _head(edge: EdgeHarness, tenant: str, length: int) -> bytes:
    auth = edge.tenant(tenant)["Authorization"]
    lines = [
        "PUT /v1/documents HTTP/1.1",
        "Host: edge",
        f"Authorization: {auth}",
        "Content-Type: image/png",
        f"Content-Length: {length}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def test_edge_slow_body_is_cut_off_with_408_and_leaves_nothing(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """A body trickling under the minimum rate is answered 408 BODY_TOO_SLOW, its file deleted."""
    pace = {"edge_min_body_bytes": 256, "edge_body_window_s": 1.0}
    async with edge_for(**pace) as edge, _served(edge) as port:
        body = png(850)
        answer, took = await _trickle(port, _head(edge, tenant, len(body)), body, every_s=0.25)
        await asyncio.sleep(0.1)
        left = edge.leftovers()
    assert answer.startswith(b"HTTP/1.1 408") and b"BODY_TOO_SLOW" in answer
    assert took < 5 and left == []


async def test_edge_slow_headers_are_cut_off(edge_for: EdgeFactory, tenant: str) -> None:
    """A request head trickling in (slowloris) has its connection closed at the header timeout."""
    async with edge_for(edge_header_timeout_s=1.0) as edge, _served(edge) as port:
        answer, took = await _trickle(port, b"", _head(edge, tenant, 10) * 8, every_s=0.2)
    assert answer == b"" and took < 4  # closed by the server, long before the head was sent


async def test_edge_oversized_headers_are_refused(edge_for: EdgeFactory, tenant: str) -> None:
    """A head still incomplete past edge_max_header_bytes is a 400, not a growing buffer."""
    async with edge_for(edge_max_header_bytes=4096) as edge, _served(edge) as port:
        pad = b"X-Pad: " + b"a" * 8192 + b"\r\n"
        head = _head(edge, tenant, 10).replace(b"Host:", pad + b"Host:")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head[:6000])  # more than the bound, and no end of head yet
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.write(head[6000:])
        answer = await asyncio.wait_for(reader.read(65536), timeout=10)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 400")


async def test_serve_refuses_production_staging_on_a_plain_disk(
    temporal_client: Client, settings_for: SettingsFactory
) -> None:
    """``custody serve`` runs the workers' tmpfs / encrypted-volume check before it listens."""
    client = custody_client(temporal_client, settings_for(env="production"))
    args = argparse.Namespace(host="127.0.0.1", port=0)
    with pytest.raises(ConfigurationError) as refused:
        await asyncio.wait_for(serve._serve(args, client), timeout=30)
    assert "tmpfs" in refused.value.detail


async def test_an_embedded_edge_leaves_the_commands_signals_to_the_command() -> None:
    """A benchmark's edge must not take SIGINT: uvicorn's own handler would shut it with
    the benchmark's uploads in flight (seen in CI: exit 1 ConnectError, not 130)."""

    async def handler_while_serving(web: uvicorn.Server) -> object:
        serving = asyncio.create_task(web.serve())
        while not web.started:
            await asyncio.sleep(0.01)
        seen = signal.getsignal(signal.SIGINT)
        web.should_exit = True
        await serving
        return seen

    before = signal.getsignal(signal.SIGINT)
    app = uvicorn.Config(_empty_app, host="127.0.0.1", port=0, log_level="warning")
    assert await handler_while_serving(server.Embedded(app)) is before
    plain = await handler_while_serving(uvicorn.Server(app))  # what the benchmarks had
    assert plain is not before
    assert signal.getsignal(signal.SIGINT) is before


async def _empty_app(scope: dict[str, object], receive: object, send: object) -> None:
    """An ASGI app with nothing to serve: the test reads signal handlers only."""
