"""The edge when things go wrong: the manual lane, a store outage, a failed start."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.stores import StoreUnavailable
from custody.stores.local import LocalStore
from starter.cli.admission import release
from starter.client.connect import CustodyClient
from starter.edge import manual, tenants
from starter.edge import read as edge_read
from tests.starter.edge.conftest import EdgeHarness, SettingsFactory, png

EdgeFactory = Callable[..., EdgeHarness]
PNG = {"Content-Type": "image/png"}


class OutageStore(LocalStore):
    """Fault injection: a local store whose chosen operations fail as a store outage would."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.failing: set[str] = set()

    def _check(self, op: str) -> None:
        if op in self.failing or "*" in self.failing:
            raise StoreUnavailable("injected outage")

    def get(self, key: str) -> bytes:
        self._check("get")
        return super().get(key)

    def exists(self, key: str) -> bool:
        self._check("exists")
        return super().exists(key)

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        self._check("create_from_file")
        return super().create_from_file(key, src)


def _edge(temporal_client: Client, settings_for: SettingsFactory, **kw: Any) -> EdgeHarness:
    settings = settings_for(**kw)
    store = OutageStore(settings.objects_dir)
    return EdgeHarness(CustodyClient(temporal=temporal_client, store=store, settings=settings))


async def test_edge_store_outage_is_coded_503_with_retry_after(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """With the store down, upload and read answer 503 STORE_UNAVAILABLE with Retry-After."""
    async with _edge(temporal_client, settings_for) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        assert isinstance(edge.client.store, OutageStore)
        edge.client.store.failing.add("*")
        put = await edge.http.put("/v1/documents", content=png(500), headers=auth)
        get = await edge.http.get(f"/v1/documents/{'0' * 64}", headers=auth)
        edge.client.store.failing.clear()
    for resp in (put, get):
        assert resp.status_code == 503
        assert resp.json()["error"] == "STORE_UNAVAILABLE"
        assert int(resp.headers["retry-after"]) >= 1
    assert edge.leftovers() == []


async def test_edge_failed_intake_write_gives_the_admission_place_back(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """An admitted upload whose intake write fails frees its place at once, not after the grace."""
    async with _edge(temporal_client, settings_for, admission_max_waiting=1) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        assert isinstance(edge.client.store, OutageStore)
        edge.client.store.failing.add("create_from_file")
        failed = await edge.http.put("/v1/documents", content=png(510), headers=auth)
        edge.client.store.failing.clear()
        waiting_after_failure = edge.admission.stats().documents
        retried = await edge.http.put("/v1/documents", content=png(511), headers=auth)
    assert failed.status_code == 503 and failed.json()["error"] == "STORE_UNAVAILABLE"
    assert waiting_after_failure == 0
    assert retried.status_code == 202  # the only place was free again


async def test_edge_manual_lane_parks_overflow_and_release_submits_it(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """Past the bound with the lane on, the upload is parked (202, no workflow) until released."""
    async with edge_for(admission_max_waiting=1, admission_manual_lane=True) as edge:
        auth = {**edge.tenant(tenant), **PNG, "Custody-Source-Id": "clinic-7"}
        first = await edge.http.put("/v1/documents", content=png(520), headers=auth)
        over = await edge.http.put("/v1/documents", content=png(521), headers=auth)
        sha = hashlib.sha256(png(521)).hexdigest()
        notes = manual.parked(edge.client.store)
        seen = await edge.http.get(over.headers["location"], headers=auth)
        other = await edge.http.get(over.headers["location"], headers=edge.tenant(f"{tenant}-x"))
        intake_before = sorted(edge.client.store.list("intake/"))
        sub = await release(edge.client, sha, tenant)
        metrics = await edge.scrape()
    assert first.status_code == 202 and first.json()["state"] == "accepted"
    assert over.status_code == 202 and over.json()["state"] == "manual"
    assert over.json()["workflow_id"] is None
    assert seen.status_code == 200 and seen.json()["state"] == "manual"
    assert other.status_code == 404  # parked documents stay the tenant's own
    assert [(n["sha256"], n["reason"], n["source_id"]) for n in notes] == [
        (sha, "waiting_documents", "clinic-7")
    ]
    assert ids.intake_key(sha, tenant) not in intake_before  # nothing started for it
    assert sub is not None and sub.state == "accepted" and not sub.deduplicated
    assert manual.parked(edge.client.store) == []
    assert 'custody_manual_lane_total{reason="waiting_documents"} 1.0' in metrics


async def test_edge_manual_lane_off_still_refuses_with_429(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """Without the lane the same overflow is a 429 and nothing is parked."""
    async with edge_for(admission_max_waiting=1) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        await edge.http.put("/v1/documents", content=png(530), headers=auth)
        over = await edge.http.put("/v1/documents", content=png(531), headers=auth)
    assert over.status_code == 429
    assert manual.parked(edge.client.store) == []
    assert tenants.get(edge.client.store, tenant) is not None


async def test_edge_temporal_outage_is_coded_503_not_a_500(
    temporal_client: Client,
    settings_for: SettingsFactory,
    tenant: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Temporal busy or restarting (an RPC error injected on purpose: the real server
    is up) answers 503 UNREACHABLE with Retry-After; any other RPC error stays a 500."""
    async with _edge(temporal_client, settings_for) as edge:
        auth = edge.tenant(tenant)
        url = f"/v1/documents/{'0' * 64}"

        async def busy(*args: Any, **kwargs: Any) -> Any:
            raise RPCError("injected", RPCStatusCode.UNAVAILABLE, b"")

        monkeypatch.setattr(edge_read, "described", busy)
        down = await edge.http.get(url, headers=auth)

        async def broken(*args: Any, **kwargs: Any) -> Any:
            raise RPCError("injected", RPCStatusCode.INVALID_ARGUMENT, b"")

        monkeypatch.setattr(edge_read, "described", broken)
        with pytest.raises(RPCError):  # the test client re-raises what would be a 500
            await edge.http.get(url, headers=auth)
    assert down.status_code == 503, down.text
    assert down.json()["error"] == "UNREACHABLE"
    assert int(down.headers["retry-after"]) >= 1
