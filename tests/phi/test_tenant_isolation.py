"""One tenant never reads, verifies, exports or lists another's documents.

One sealed pipeline (keyring in CUSTODY_HOME/keys, so the CLI subprocesses
open the same store) with real OCR: tenant A submits a scan through the
Python API, tenant B submits the same bytes through the HTTP edge, and B alone
submits a second document. Then every reader is asked, as A, about B's
documents: the Python API, the CLI (``verify``, ``evidence show|export|find``,
``status``, ``ls``, ``quarantine ls``) and the edge.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import ids
from custody.errors import NotFound
from custody.keys import keyring as keys
from custody.models import DocState, DocumentResult
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.client import read as queries
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from starter.edge import tenants
from starter.edge.app import create_app
from tests.helpers import custody_cli, make_settings, running_pipeline


@dataclass
class World:
    settings: Settings
    custody: CustodyClient
    a: str
    b: str
    shared: str  # sha256 both tenants submitted
    b_only: str  # sha256 only B submitted
    res_a: DocumentResult
    res_b: DocumentResult
    edge_a: dict[str, str]
    edge_b: dict[str, str]
    http: httpx.AsyncClient


@pytest.fixture(scope="module")
async def world(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
) -> AsyncIterator[World]:
    home = tmp_path_factory.mktemp("isolation")
    settings = make_settings(home, temporal_address)
    ring = keys.init_keyring(keys.keys_dir(settings), development=True)
    store = SealedStore(LocalStore(settings.objects_dir), ring)
    scan = (corpus / "ocr_gt" / "tess_phototest.tif").read_bytes()
    a, b = f"a{uuid4().hex[:10]}", f"b{uuid4().hex[:10]}"
    async with running_pipeline(temporal_client, settings, ocr_engine, store=store) as custody:
        app = create_app(custody)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://edge")
        edge_a, edge_b = ({"Authorization": f"Bearer {tenants.add(store, t)[1]}"} for t in (a, b))
        sub_a = await submit(custody, scan, tenant=a, source_id="fax-a")
        put = await http.put(
            "/v1/documents", content=scan, headers={**edge_b, "Content-Type": "image/tiff"}
        )
        assert put.status_code == 202, put.text
        assert put.json()["sha256"] == sub_a.sha256 and a not in put.text
        sub_b_only = await submit(custody, scan + b"\n", tenant=b, source_id="fax-b")
        res_a = await wait(custody, sub_a.sha256, tenant=a)
        res_b = await wait(custody, sub_a.sha256, tenant=b)
        await wait(custody, sub_b_only.sha256, tenant=b)
        yield World(
            settings,
            custody,
            a,
            b,
            sub_a.sha256,
            sub_b_only.sha256,
            res_a,
            res_b,
            edge_a,
            edge_b,
            http,
        )
        await http.aclose()


def _no_trace_of(answer: Any, world: World, *, of: str) -> None:
    """The answer names neither the other tenant nor its workflow run."""
    text = json.dumps(answer, default=str)
    other = world.res_b if of == world.b else world.res_a
    assert of not in text and other.run_id not in text


async def test_isolation_same_bytes_from_two_tenants_are_two_documents(world: World) -> None:
    """Both published, as separate workflows and records; neither result names the other."""
    a, b = world.res_a, world.res_b
    assert a.state is b.state is DocState.PUBLISHED
    assert a.workflow_id == ids.workflow_id(world.shared, world.a)
    assert b.workflow_id == ids.workflow_id(world.shared, world.b)
    assert a.run_id != b.run_id and a.record_key != b.record_key
    assert a.record_key and f"/{world.a}/" in a.record_key
    _no_trace_of(a.model_dump(mode="json"), world, of=world.b)
    _no_trace_of(b.model_dump(mode="json"), world, of=world.a)
    view_a = queries.result(world.custody, world.shared, world.a)
    assert view_a.record.tenant == world.a and view_a.record.source_id == "fax-a"
    _no_trace_of(view_a.model_dump(mode="json"), world, of=world.b)


async def test_isolation_python_api_refuses_other_tenant(world: World) -> None:
    """As A, B's own document is NotFound everywhere, and A's listing holds A's only."""
    with pytest.raises(NotFound):
        queries.result(world.custody, world.b_only, world.a)
    with pytest.raises(NotFound):
        await queries.status(world.custody, world.b_only, world.a)
    with pytest.raises(NotFound):
        await wait(world.custody, world.b_only, tenant=world.a)
    rows = await queries.list_documents(world.custody, tenant=world.a)
    assert [(r.sha256, r.tenant) for r in rows] == [(world.shared, world.a)]
    # No tenant: documents submitted without one (other tests may have some), never A's or B's.
    untenanted = await queries.list_documents(world.custody)
    assert not {r.tenant for r in untenanted} & {world.a, world.b}
    every = await queries.list_documents(world.custody, all_tenants=True)
    assert {(r.sha256, r.tenant) for r in every} >= {
        (world.shared, world.a),
        (world.shared, world.b),
        (world.b_only, world.b),
    }


async def test_isolation_http_edge_refuses_other_tenant(world: World) -> None:
    """Over HTTP, A sees its copy of the shared bytes, and B's own document is a plain 404."""
    mine = await world.http.get(f"/v1/documents/{world.shared}", headers=world.edge_a)
    assert mine.status_code == 200 and mine.json()["state"] == "published"
    _no_trace_of(mine.json(), world, of=world.b)
    theirs = await world.http.get(f"/v1/documents/{world.b_only}", headers=world.edge_a)
    missing = await world.http.get(f"/v1/documents/{'0' * 64}", headers=world.edge_a)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == missing.json()
    b_sees = await world.http.get(f"/v1/documents/{world.b_only}", headers=world.edge_b)
    assert b_sees.status_code == 200


async def _cli(world: World, *args: str) -> tuple[int, Any]:
    return await custody_cli(world.settings, *args)


async def test_isolation_cli_refuses_other_tenant(world: World, tmp_path: Path) -> None:
    """As A, the CLI cannot show, export, verify, find or list B's document; as B it can."""
    a, b_only = world.a, world.b_only
    rc, shown = await _cli(world, "evidence", "show", b_only, "--tenant", a)
    assert rc == 5 and shown["error"] == "NOT_FOUND"
    bundle = tmp_path / "b.zip"
    rc, _ = await _cli(world, "evidence", "export", b_only, "-o", str(bundle), "--tenant", a)
    assert rc == 5 and not bundle.exists()
    rc, verified = await _cli(world, "verify", b_only, "--tenant", a)
    assert rc == 8 and verified["failed"] == 1
    _no_trace_of(verified, world, of=world.b)
    rc, status = await _cli(world, "status", b_only, "--tenant", a)
    assert rc == 5 and status["error"] == "NOT_FOUND"
    rc, found = await _cli(world, "evidence", "find", "--tenant", a)
    assert rc == 0 and [(r["sha256"], r["tenant"]) for r in found] == [(world.shared, a)]
    rc, listed = await _cli(world, "ls", "--tenant", a)
    assert rc == 0 and [(r["sha256"], r["tenant"]) for r in listed] == [(world.shared, a)]
    rc, verified = await _cli(world, "verify", "--all", "--tenant", a)
    assert rc == 0 and [r["subject"] for r in verified["reports"]] == [
        ids.workflow_id(world.shared, a)
    ]
    # Without --tenant: documents of no tenant only, never everyone's.
    for argv in (("evidence", "find"), ("ls",), ("quarantine", "ls")):
        rc, rows = await _cli(world, *argv)
        assert rc == 0 and not {r["tenant"] for r in rows} & {a, world.b}, argv
    rc, every = await _cli(world, "evidence", "find", "--all-tenants")
    assert rc == 0 and {r["tenant"] for r in every} >= {a, world.b}
    rc, _ = await _cli(world, "evidence", "find", "--all-tenants", "--tenant", a)
    assert rc != 0
    rc, theirs = await _cli(world, "evidence", "show", b_only, "--tenant", world.b)
    assert rc == 0 and theirs["record"]["tenant"] == world.b
