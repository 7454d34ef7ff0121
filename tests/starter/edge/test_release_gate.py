"""``POST /v1/releases`` admission: a bounded body, each tenant's rate and running releases.

Over ASGI on the real edge app, against the dev server; no worker polls these
task queues, so a started release stays running, which is what the bound counts.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from custody import egress as eg
from custody.state.egress import add_recipient
from tests.helpers import recipient
from tests.starter.edge.conftest import EdgeHarness


def _request(*docs: str, to: str = "clinic-b") -> dict[str, Any]:
    return {"documents": list(docs), "recipient": to}


async def test_release_gate_deep_json_is_a_coded_400_not_a_500(
    edge_for: Callable[..., EdgeHarness],
) -> None:
    """JSON nested past the parser's depth (within the size cap) answers 400 BAD_REQUEST."""
    async with edge_for() as edge:
        auth = edge.tenant("gate-" + os.urandom(3).hex())
        nested = "[" * 30_000 + "]" * 30_000
        got = await edge.http.post("/v1/releases", content=nested, headers=auth)
    assert (got.status_code, got.json()["error"]) == (400, "BAD_REQUEST")


async def test_release_gate_body_over_the_cap_is_413(edge_for: Callable[..., EdgeHarness]) -> None:
    """A body past CUSTODY_EDGE_RELEASE_BODY_BYTES is refused, declared or streamed."""
    async with edge_for(edge_release_body_bytes=2048) as edge:
        auth = edge.tenant("gate-" + os.urandom(3).hex())
        big = json.dumps(_request(*["a" * 64] * 40)).encode()
        declared = await edge.http.post("/v1/releases", content=big, headers=auth)

        async def chunks() -> Any:
            for start in range(0, len(big), 512):
                yield big[start : start + 512]

        streamed = await edge.http.post("/v1/releases", content=chunks(), headers=auth)
    for got in (declared, streamed):
        assert (got.status_code, got.json()["error"]) == (413, "TOO_LARGE")


async def test_release_gate_rate_per_tenant(edge_for: Callable[..., EdgeHarness]) -> None:
    """Past the tenant's burst, 429 ADMISSION_TENANT_RATE with Retry-After; another tenant
    still gets through."""
    async with edge_for(edge_release_rate=0.01, edge_release_burst=2) as edge:
        noisy, quiet = (edge.tenant(f"gate-{n}-" + os.urandom(3).hex()) for n in "nq")
        answers = [
            await edge.http.post(
                "/v1/releases", json=_request("a" * 64, to="nobody"), headers=noisy
            )
            for _ in range(3)
        ]
        other = await edge.http.post(
            "/v1/releases", json=_request("a" * 64, to="nobody"), headers=quiet
        )
    assert [a.status_code for a in answers] == [404, 404, 429]
    assert answers[2].json()["error"] == "ADMISSION_TENANT_RATE"
    assert int(answers[2].headers["Retry-After"]) >= 1
    assert other.status_code == 404


async def test_release_gate_running_releases_per_tenant(
    edge_for: Callable[..., EdgeHarness],
) -> None:
    """With one release running (no worker takes it), a second is 429 INFLIGHT_RELEASES."""
    async with edge_for(edge_max_running_releases_per_tenant=1) as edge:
        name = "gate-run-" + os.urandom(3).hex()
        auth = edge.tenant(name)
        folder = edge.client.settings.home / "outbox"
        add_recipient(edge.client.store, recipient(name, "clinic-b", folder))
        first = await edge.http.post("/v1/releases", json=_request("a" * 64), headers=auth)
        second = await edge.http.post("/v1/releases", json=_request("b" * 64), headers=auth)
        handle = edge.client.temporal.get_workflow_handle(
            eg.release_workflow_id(first.json()["release_id"])
        )
        await asyncio.shield(handle.terminate())
    assert first.status_code == 202, first.text
    assert (second.status_code, second.json()["error"]) == (429, "INFLIGHT_RELEASES")
