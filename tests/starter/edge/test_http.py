"""The HTTP edge in-process over ASGI: answers, refusals, idempotency, tenant isolation."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from openapi_spec_validator import validate

from starter.client.pause import set_paused
from starter.edge import tenants
from tests.starter.edge.conftest import EdgeHarness, png

EdgeFactory = Callable[..., EdgeHarness]
PNG = {"Content-Type": "image/png"}


async def test_edge_upload_answers_202_with_location_and_state(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """An accepted upload answers 202 with its SHA-256 and Location, and GET gives its state."""
    async with edge_for() as edge:
        auth = edge.tenant(tenant)
        body = png(100)
        resp = await edge.http.put("/v1/documents", content=body, headers={**auth, **PNG})
        got = await edge.http.get(resp.headers["location"], headers=auth)
    sha = hashlib.sha256(body).hexdigest()
    assert resp.status_code == 202
    assert resp.json()["sha256"] == sha and resp.json()["deduplicated"] is False
    assert resp.headers["location"] == f"/v1/documents/{sha}"
    assert got.status_code == 200 and got.json()["state"] == "accepted"
    assert edge.leftovers() == [f"intake/{tenant}/{sha}"]


async def test_edge_idempotent_retry_replays_first_answer_and_other_body_is_422(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """The same key and body replay the first answer; the same key with another body is 422."""
    async with edge_for() as edge:
        headers = {**edge.tenant(tenant), **PNG, "Idempotency-Key": "k-1"}
        first = await edge.http.post("/v1/documents", content=png(110), headers=headers)
        again = await edge.http.post("/v1/documents", content=png(110), headers=headers)
        other = await edge.http.post("/v1/documents", content=png(111), headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    assert other.status_code == 422 and other.json()["error"] == "IDEMPOTENCY_KEY_REUSED"
    assert len(list(edge.client.store.list("intake/"))) == 1


async def test_edge_other_tenant_document_is_404_like_a_missing_one(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """Another tenant's document is a 404 with the same body as a document that does not exist."""
    async with edge_for() as edge:
        owner, other = edge.tenant(tenant), edge.tenant(f"{tenant}-x")
        resp = await edge.http.put("/v1/documents", content=png(120), headers={**owner, **PNG})
        theirs = await edge.http.get(resp.headers["location"], headers=other)
        missing = await edge.http.get(f"/v1/documents/{'0' * 64}", headers=other)
        mine = await edge.http.get(resp.headers["location"], headers=owner)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == missing.json()
    assert mine.status_code == 200


async def _chunks(total: int) -> AsyncIterator[bytes]:
    yield b"\x89PNG\r\n\x1a\n"
    for _ in range(total // 1024):
        yield b"\0" * 1024


def _refusals(auth: dict[str, str], revoked: dict[str, str]) -> list[tuple[int, dict[str, Any]]]:
    pdf = b"%PDF-1.7\n" + b"\0" * 100
    return [
        (401, {"content": png(1), "headers": PNG}),
        (401, {"content": png(1), "headers": {**PNG, "Authorization": "Bearer cst_nope"}}),
        (403, {"content": png(1), "headers": {**PNG, **revoked}}),
        (413, {"content": png(1), "headers": {**PNG, **auth, "Content-Length": "999999"}}),
        (413, {"content": _chunks(8192), "headers": {**PNG, **auth}}),
        (413, {"content": png(1), "headers": {**PNG, **auth, "Custody-Page-Count": "99"}}),
        (415, {"content": pdf, "headers": {**PNG, **auth}}),
        (415, {"content": png(1), "headers": {"Content-Type": "text/plain", **auth}}),
        (400, {"content": b"", "headers": {**PNG, **auth}}),
    ]


async def test_edge_refusals_start_nothing_and_leave_no_file(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """401/403/413/415/400 refusals have a stable error body, start no workflow, leave no file."""
    async with edge_for(limits={"max_bytes": 4096}) as edge:
        auth = edge.tenant(tenant)
        revoked = edge.tenant(f"{tenant}-r")
        tenants.revoke(edge.client.store, f"{tenant}-r")
        for status, request in _refusals(auth, revoked):
            resp = await edge.http.put("/v1/documents", **request)
            assert (resp.status_code, sorted(resp.json())) == (status, ["error", "message"])
        queue = edge.client.settings.io_task_queue
        started = await edge.client.temporal.count_workflows(f"TaskQueue = '{queue}'")
    assert edge.leftovers() == []
    assert started.count == 0


async def test_edge_backpressure_is_429_and_pause_is_503_with_retry_after(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """A full lane answers 429 and a paused one 503, both with Retry-After, counted in /metrics."""
    async with edge_for(admission_max_waiting=1) as edge:
        headers = {**edge.tenant(tenant), **PNG}
        ok = await edge.http.put("/v1/documents", content=png(130), headers=headers)
        full = await edge.http.put("/v1/documents", content=png(131), headers=headers)
        set_paused(edge.client.store, True)
        paused = await edge.http.put("/v1/documents", content=png(132), headers=headers)
        scrape = await edge.scrape()
    assert ok.status_code == 202
    assert (full.status_code, full.json()["error"]) == (429, "ADMISSION_WAITING_DOCUMENTS")
    assert (paused.status_code, paused.json()["error"]) == (503, "ADMISSION_PAUSED")
    assert int(full.headers["retry-after"]) >= 1 and int(paused.headers["retry-after"]) >= 1
    assert 'custody_admission_rejections_total{reason="waiting_documents"}' in scrape
    assert "custody_queue_age_seconds" in scrape and tenant not in scrape
    assert edge.leftovers() == [f"intake/{tenant}/{hashlib.sha256(png(130)).hexdigest()}"]


async def test_edge_openapi_document_validates(edge_for: EdgeFactory) -> None:
    """The served OpenAPI document is a valid OpenAPI 3 description of the upload routes."""
    async with edge_for() as edge:
        spec = (await edge.http.get("/openapi.json")).json()
    validate(spec)
    assert {"put", "post"} <= set(spec["paths"]["/v1/documents"])


def test_tenants_key_is_stored_only_as_a_hash(edge_for: EdgeFactory, tenant: str) -> None:
    """The API key authenticates, never appears in the store, and stops working once revoked."""
    store = edge_for().client.store
    _, key = tenants.add(store, tenant)
    stored = b"".join(store.get(k) for k in store.list("tenant"))
    assert tenants.authenticate(store, key).name == tenant
    secret = key.removeprefix(tenants._PREFIX).split("_", 1)[1]  # the secret may hold "_"
    assert len(secret) >= 40 and key.encode() not in stored and secret.encode() not in stored
    tenants.revoke(store, tenant)
    with pytest.raises(tenants.AuthError) as err:
        tenants.authenticate(store, key)
    assert err.value.revoked is True
