"""Scoped API keys (issue #31): each route needs its scope; outside it, 403 SCOPE_DENIED."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from custody.settings import Settings
from custody.state import versions
from custody.stores import ObjectStore
from starter.edge import tenants
from starter.edge.scopes import Scope
from tests.helpers import cli
from tests.starter.edge.conftest import EdgeHarness, png

EdgeFactory = Callable[..., EdgeHarness]

PNG = {"Content-Type": "image/png"}
RELEASE = {"documents": ["0" * 64], "recipient": "clinic-b"}


async def test_scopes_an_upload_key_uploads_and_reads_nothing_back(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """An ``upload``-only key: 202 on PUT, 403 SCOPE_DENIED on GET documents, POST releases,
    GET releases and /metrics; nothing staged by a refused request."""
    async with edge_for() as edge:
        scanner = edge.tenant(tenant, scopes=[Scope.UPLOAD])
        put = await edge.http.put("/v1/documents", content=png(301), headers={**scanner, **PNG})
        sha = put.json()["sha256"]
        read = await edge.http.get(f"/v1/documents/{sha}", headers=scanner)
        release = await edge.http.post("/v1/releases", json=RELEASE, headers=scanner)
        status = await edge.http.get(f"/v1/releases/{'0' * 32}", headers=scanner)
        scrape = await edge.http.get("/metrics", headers=scanner)
        leftovers = edge.leftovers()
    assert put.status_code == 202
    for refused in (read, release, status, scrape):
        assert (refused.status_code, refused.json()["error"]) == (403, "SCOPE_DENIED")
        assert "upload" in refused.json()["message"]  # names what the key holds
    assert [k for k in leftovers if "intake/" in k] == [f"intake/{tenant}/{sha}"]


async def test_scopes_a_second_key_and_its_revocation_leave_the_first(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """``tenants keys add`` mints a reader beside the scanner; revoking it (KEY_REVOKED)
    leaves the scanner's key working; both are listed with their scopes, never secrets."""
    async with edge_for() as edge:
        settings, store = edge.client.settings, edge.client.store
        scanner = edge.tenant(tenant, scopes=[Scope.UPLOAD])
        rc, minted = cli(settings, "tenants", "keys", "add", tenant, "--scope", "read")
        assert rc == 0 and minted["scopes"] == ["read"], minted
        reader = {"Authorization": f"Bearer {minted['api_key']}"}
        put = await edge.http.put("/v1/documents", content=png(302), headers={**scanner, **PNG})
        sha = put.json()["sha256"]
        seen = await edge.http.get(f"/v1/documents/{sha}", headers=reader)
        rc, _ = cli(settings, "tenants", "keys", "revoke", tenant, minted["key_id"])
        gone = await edge.http.get(f"/v1/documents/{sha}", headers=reader)
        still = await edge.http.put("/v1/documents", content=png(303), headers={**scanner, **PNG})
        rc_ls, listed = cli(settings, "tenants", "keys", "ls", tenant)
    assert seen.status_code == 200 and seen.json()["sha256"] == sha
    assert rc == 0 and (gone.status_code, gone.json()["error"]) == (403, "KEY_REVOKED")
    assert still.status_code == 202
    assert rc_ls == 0 and {k["key_id"]: k["state"] for k in listed} == {
        tenants.get(store, tenant).key_id: "active",  # type: ignore[union-attr]
        minted["key_id"]: "revoked",
    }
    assert minted["api_key"] not in json.dumps(listed)


async def test_scopes_a_key_from_before_scopes_is_legacy_all_and_production_refuses_it(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """A first key with no key record (minted by an older release) keeps every route in
    development as ``legacy-all``; an edge in production answers it 403 SCOPE_DENIED."""
    async with edge_for() as edge:
        store = edge.client.store
        key_id, key = _added_by_an_older_release(store, tenant)
        old = {"Authorization": f"Bearer {key}"}
        scrape = await edge.http.get("/metrics", headers=old)
        listed = tenants.list_keys(store, tenant)
    async with edge_for(env="production") as strict:  # the same home and store
        refused = await strict.http.get("/metrics", headers=old)
    assert scrape.status_code == 200
    assert [(k.key_id, k.scopes) for k in listed] == [(key_id, (Scope.LEGACY_ALL,))]
    assert (refused.status_code, refused.json()["error"]) == (403, "SCOPE_DENIED")
    assert "legacy-all" in refused.json()["message"]


def _added_by_an_older_release(store: ObjectStore, name: str) -> tuple[str, str]:
    """A tenant as ``tenants.add`` wrote it before scopes: a record, an index, no key record."""
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    digest = hashlib.sha256(secret.encode()).hexdigest()
    tenant = tenants.Tenant(
        name=name, key_id=key_id, key_sha256=digest, created_at=datetime.now(UTC)
    )
    body = tenant.model_dump_json().encode()
    store.create(f"tenants/{name}.json", body)
    versions.append(store, f"tenants/{name}/record/", body)
    store.create(f"tenant-keys/{key_id}.json", json.dumps({"tenant": name}).encode())
    return key_id, f"cst_{key_id}_{secret}"


def test_scopes_tenants_add_mints_upload_and_read_unless_told(tmp_path: Path) -> None:
    """``tenants add`` gives the first key upload and read; ``--scope`` replaces them."""
    settings = Settings(home=tmp_path, allow_plaintext=True)
    rc, plain = cli(settings, "tenants", "add", "clinic-a")
    rc2, told = cli(settings, "tenants", "add", "clinic-b", "--scope", "review")
    rc3, bad = cli(settings, "tenants", "keys", "add", "clinic-a", "--scope", "legacy-all")
    assert rc == 0 and plain["scopes"] == ["upload", "read"]
    assert rc2 == 0 and told["scopes"] == ["review"]
    assert rc3 == 2 and bad["error"] == "USAGE"  # legacy-all is never minted
