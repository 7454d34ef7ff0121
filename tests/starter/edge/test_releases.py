"""``POST /v1/releases`` and ``GET /v1/releases/{id}`` on the edge app, over ASGI.

One real document is published for the module under a tenant with an API key
and a recipient whose outbox is a real directory; one release of it is made
through the edge and shared by the tests that read it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.settings import Settings
from custody.state.egress import add_recipient, egress_events, revoke_recipient
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.edge import tenants
from starter.edge.scopes import Scope
from tests.helpers import make_settings, publish_scan, recipient, running_pipeline
from tests.starter.edge.conftest import EdgeHarness, custody_client

RECIPIENT = "clinic-b"


@dataclass
class Tenanted:
    settings: Settings
    tenant: str
    key_id: str
    auth: dict[str, str]
    sha256: str
    outbox: Path


@pytest.fixture(scope="module")
async def published(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
) -> Tenanted:
    home = tmp_path_factory.mktemp("edge-releases")
    settings = make_settings(home, temporal_address, admission_refresh_s=0.0)
    tenant = "edge-rel-" + os.urandom(4).hex()
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sha = await publish_scan(custody, corpus, tenant)
        record, key = tenants.add(custody.store, tenant, scopes=[Scope.RELEASE])
        for name in (RECIPIENT, "clinic-gone"):
            add_recipient(custody.store, recipient(tenant, name, home / "outbox"))
        revoke_recipient(custody.store, tenant, "clinic-gone", by="test")
    auth = {"Authorization": f"Bearer {key}"}
    return Tenanted(settings, tenant, record.key_id, auth, sha, home / "outbox")


@dataclass
class Released:
    started: httpx.Response
    pending: httpx.Response
    again: httpx.Response
    finished: dict[str, Any]


async def _until_done(http: httpx.AsyncClient, location: str, auth: dict[str, str]) -> Any:
    for _ in range(240):
        got = await http.get(location, headers=auth)
        assert got.status_code == 200, got.text
        if got.json()["state"] != "running":
            return got.json()
        await asyncio.sleep(0.25)
    raise AssertionError("the release did not finish in 60 s")


@pytest.fixture(scope="module")
async def released(temporal_client: Client, published: Tenanted, ocr_engine: OcrEngine) -> Released:
    p = published
    body = {"documents": [p.sha256], "recipient": RECIPIENT, "purpose": "continuing care"}
    async with EdgeHarness(custody_client(temporal_client, p.settings)) as edge:
        # No worker yet: the release waits, and GET must answer it from its history.
        started = await edge.http.post("/v1/releases", json=body, headers=p.auth)
        pending = await edge.http.get(started.headers["location"], headers=p.auth)
        async with running_pipeline(temporal_client, p.settings, ocr_engine, with_ocr_worker=False):
            finished = await _until_done(edge.http, started.headers["location"], p.auth)
            again = await edge.http.post("/v1/releases", json=body, headers=p.auth)
    return Released(started, pending, again, finished)


async def test_edge_release_post_answers_202_running_then_get_delivered(
    published: Tenanted, released: Released
) -> None:
    """POST answers 202 with the release's id and Location; GET then shows it delivered."""
    p, started = published, released.started
    assert started.status_code == 202, started.text
    body = started.json()
    rid = eg.release_id(p.tenant, RECIPIENT, eg.DEFAULT_POLICY.sha256(), [p.sha256])
    assert body["release_id"] == rid and body["state"] == "running" and body["files"] == []
    assert body["recipient"] == RECIPIENT and body["policy_sha256"] == eg.DEFAULT_POLICY.sha256()
    assert started.headers["location"] == f"/v1/releases/{rid}"
    assert released.pending.status_code == 200 and released.pending.json() == body
    done = released.finished
    assert done["state"] == "delivered" and done["code"] is None
    [file] = done["files"]
    delivered = (p.outbox / rid / file["name"]).read_bytes()
    assert hashlib.sha256(delivered).hexdigest() == file["sha256"]


async def test_edge_release_actor_is_the_api_key_id(
    published: Tenanted, released: Released
) -> None:
    """The egress event names the API key's id as the actor, never the key itself, and the
    body's purpose of disclosure."""
    p, rid = published, released.finished["release_id"]
    store = LocalStore(p.settings.objects_dir)
    [event] = [e for e in egress_events(store, p.tenant) if e.release_id == rid]
    assert event.actor == p.key_id and event.purpose == "continuing care"
    assert "cst_" not in event.actor


async def test_edge_release_post_again_joins_the_same_release(
    published: Tenanted, released: Released
) -> None:
    """The same request again answers the same release id; the recipient holds one copy."""
    assert released.again.status_code == 202
    assert released.again.json()["release_id"] == released.started.json()["release_id"]
    files = [f for f in published.outbox.rglob("*") if f.is_file()]
    assert len(files) == 2  # the PDF and the packet manifest, once


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ("not json", 400, "BAD_REQUEST"),
        ({"documents": [], "recipient": RECIPIENT}, 400, "BAD_REQUEST"),
        ({"documents": ["XYZ"], "recipient": RECIPIENT}, 400, "BAD_SHA256"),
        ({"documents": ["ab" * 32], "recipient": "nobody"}, 404, "RECIPIENT_UNKNOWN"),
        ({"documents": ["ab" * 32], "recipient": RECIPIENT, "policy": "no"}, 404, "POLICY_UNKNOWN"),
        ({"documents": ["ab" * 32], "recipient": "clinic-gone"}, 422, "RECIPIENT_REVOKED"),
        ({"documents": ["ab" * 32], "recipient": RECIPIENT, "purpose": "a\nb"}, 400, "BAD_REQUEST"),
        ({"documents": ["ab" * 32], "recipient": RECIPIENT, "purpose": 7}, 400, "BAD_REQUEST"),
    ],
)
async def test_edge_release_refusals_are_coded(
    temporal_client: Client, published: Tenanted, body: Any, status: int, code: str
) -> None:
    """A malformed or refused request answers a 4xx with a stable code and starts nothing."""
    p = published
    async with EdgeHarness(custody_client(temporal_client, p.settings)) as edge:
        kwargs: dict[str, Any] = {"content": body} if isinstance(body, str) else {"json": body}
        resp = await edge.http.post("/v1/releases", headers=p.auth, **kwargs)
    assert resp.status_code == status and resp.json()["error"] == code


async def test_edge_release_needs_a_key_and_hides_other_tenants(
    temporal_client: Client, published: Tenanted, released: Released
) -> None:
    """No key is 401; another tenant's release is a 404 exactly like a missing one."""
    p = published
    location = released.started.headers["location"]
    async with EdgeHarness(custody_client(temporal_client, p.settings)) as edge:
        anonymous = await edge.http.post("/v1/releases", json={"documents": [p.sha256]})
        other = edge.tenant(f"{p.tenant}-x", scopes=[Scope.RELEASE])
        theirs = await edge.http.get(location, headers=other)
        missing = await edge.http.get(f"/v1/releases/{'0' * 32}", headers=p.auth)
        bad = await edge.http.get("/v1/releases/not-an-id", headers=p.auth)
    assert anonymous.status_code == 401 and anonymous.json()["error"] == "UNAUTHENTICATED"
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == missing.json()
    assert bad.status_code == 400 and bad.json()["error"] == "BAD_REQUEST"


async def test_edge_openapi_describes_releases(
    temporal_client: Client, published: Tenanted
) -> None:
    """The served OpenAPI document names both release routes and is valid OpenAPI 3."""
    async with EdgeHarness(custody_client(temporal_client, published.settings)) as edge:
        spec = (await edge.http.get("/openapi.json")).json()
    validate(spec)
    assert "post" in spec["paths"]["/v1/releases"]
    assert "get" in spec["paths"]["/v1/releases/{release_id}"]


async def test_edge_release_answers_from_its_receipt_after_retention(
    temporal_address: str, published: Tenanted, released: Released
) -> None:
    """When Temporal no longer knows the release, GET answers a delivered one from the store.

    The dev server deletes histories only eventually, so "after retention" is a
    client of a namespace that never held the workflow: describe says NOT_FOUND.
    """
    p, rid = published, released.finished["release_id"]
    forgetful = await Client.connect(temporal_address, namespace="custody-retired")
    client = CustodyClient(
        temporal=forgetful, store=LocalStore(p.settings.objects_dir), settings=p.settings
    )
    async with EdgeHarness(client) as edge:
        got = await edge.http.get(f"/v1/releases/{rid}", headers=p.auth)
        missing = await edge.http.get(f"/v1/releases/{'0' * 32}", headers=p.auth)
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["state"] == "delivered" and body["files"] == released.finished["files"]
    assert body["documents"] == [p.sha256] and body["recipient"] == RECIPIENT
    assert missing.status_code == 404
