"""Every read is accounted for: HTTP reads, ``custody result``, the SDK's ``result`` and bundles.

One real scan and one drawn discharge summary, published once for the session
(the session's engine: ``tests/published.py``), are copied for the module, under
a tenant given an API key. Each way their content leaves, the fields read
included, must append one egress event whose ``bytes_sha256`` is the SHA-256 of
exactly the bytes handed out, and when that event cannot be written, nothing
may be handed out.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import os
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from openapi_schema_validator import OAS30Validator
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.errors import StoreUnavailable
from custody.settings import Settings
from custody.state.egress import egress_events
from custody.stores.local import LocalStore
from starter.cli.actor import operator
from starter.cli.documents import result as cli_result
from starter.client.connect import CustodyClient
from starter.client.read import result as read_result
from starter.client.submit import submit
from starter.edge import tenants
from starter.edge.openapi import SPEC
from starter.evidence.bundle import export_bundle
from tests.helpers import running_pipeline
from tests.published import InHome, copy_published
from tests.published import Published as Shared
from tests.starter.edge.conftest import EdgeHarness, custody_client, png


@dataclass
class Published(InHome):
    settings: Settings
    tenant: str
    key_id: str
    auth: dict[str, str]
    sha256: str
    text: str
    #: A discharge summary: a configured type, its fields read.
    discharge: str


@pytest.fixture(scope="module")
def published(
    temporal_client: Client, published_once: Shared, tmp_path_factory: pytest.TempPathFactory
) -> Published:
    """The session's phototest scan and discharge summary, in this module's copy, under a
    tenant given an API key here."""
    home = tmp_path_factory.mktemp("egress-reads")
    p = copy_published(published_once, home, admission_refresh_s=0.0)
    custody = CustodyClient(temporal=temporal_client, store=p.store, settings=p.settings)
    record, key = tenants.add(custody.store, p.tenant)
    text = read_result(custody, p.sha256, p.tenant).text
    auth = {"Authorization": f"Bearer {key}"}
    return Published(p.settings, p.tenant, record.key_id, auth, p.sha256, text, p.discharge)


def _events(p: Published) -> list[eg.EgressRecord]:
    return list(egress_events(p.store, p.tenant))


def _new_event(p: Published, before: list[eg.EgressRecord]) -> eg.EgressRecord:
    after = _events(p)
    assert len(after) == len(before) + 1, after[len(before) :]
    return after[-1]


async def test_egress_read_http_records_the_exact_response_body(
    temporal_client: Client, published: Published
) -> None:
    """A read of a published document appends one ``read`` event hashing the body sent."""
    p = published
    before = _events(p)
    async with EdgeHarness(custody_client(temporal_client, p.settings)) as edge:
        resp = await edge.http.get(f"/v1/documents/{p.sha256}", headers=p.auth)
    assert resp.status_code == 200 and resp.json()["result"]["text"] == p.text
    event = _new_event(p, before)
    assert event.kind is eg.EgressKind.READ
    assert event.bytes_sha256 == hashlib.sha256(resp.content).hexdigest()
    assert event.actor == p.key_id and event.documents == [p.sha256]
    assert (event.policy, event.policy_sha256) == ("read", eg.READ_POLICY.sha256())
    assert event.release_id is None and event.recipient is None


async def test_egress_read_http_of_running_or_unknown_document_records_nothing(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine
) -> None:
    """A document still running, or none at all, hands out no content and leaves no event."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False, with_io_worker=False
    ) as custody:
        running = await submit(custody, png(13), tenant=p.tenant)  # no worker: it stays running
    before = _events(p)
    try:
        async with EdgeHarness(custody_client(temporal_client, p.settings)) as edge:
            pending = await edge.http.get(f"/v1/documents/{running.sha256}", headers=p.auth)
            unknown = await edge.http.get(f"/v1/documents/{'0' * 64}", headers=p.auth)
    finally:
        await temporal_client.get_workflow_handle(running.workflow_id).terminate()
    assert pending.status_code == 200 and pending.json()["running"] is True
    assert pending.json()["result"] is None
    assert unknown.status_code == 404
    assert _events(p) == before


async def test_egress_read_cli_result_records_the_printed_bytes(published: Published) -> None:
    """``custody result SHA --json`` records an event hashing exactly its stdout bytes."""
    p = published
    before = _events(p)
    env = {
        **os.environ,
        "CUSTODY_HOME": str(p.settings.home),
        "CUSTODY_TEMPORAL_ADDRESS": p.settings.temporal_address,
        "CUSTODY_ALLOW_PLAINTEXT": "true",  # the in-process workers here run without keys
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starter.cli.main",
        "result",
        p.sha256,
        "--json",
        "--tenant",
        p.tenant,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert p.text.splitlines()[0].encode() in out
    event = _new_event(p, before)
    assert event.kind is eg.EgressKind.READ
    assert event.bytes_sha256 == hashlib.sha256(out).hexdigest()
    assert event.actor == operator() and event.documents == [p.sha256]


async def test_egress_read_http_carries_the_fields_beside_the_text(
    temporal_client: Client, published: Published
) -> None:
    """The body gives each field's state, value, confidence, page and box, as the contract
    says; the one read event hashes the body with them."""
    p = published
    before = _events(p)
    async with EdgeHarness(custody_client(temporal_client, p.settings)) as edge:
        resp = await edge.http.get(f"/v1/documents/{p.discharge}", headers=p.auth)
    assert resp.status_code == 200
    fields = resp.json()["result"]["fields"]
    assert fields["discharged"] == {**fields["discharged"], "state": "value", "value": "2026-03-14"}
    assert fields["patient"]["value"] == "Amara Lindqvist" and len(fields["patient"]["box"]) == 4
    assert 0 < fields["patient"]["confidence"] < 1 and fields["patient"]["page"] == 0
    schema = {**SPEC["components"]["schemas"]["Document"], "components": SPEC["components"]}
    OAS30Validator(schema).validate(resp.json())
    event = _new_event(p, before)
    assert event.bytes_sha256 == hashlib.sha256(resp.content).hexdigest()
    assert event.documents == [p.discharge]


async def test_egress_read_cli_result_shows_the_fields_and_records_them(
    temporal_client: Client, published: Published
) -> None:
    """``custody result``: fields at the top level in JSON, one line each for people; each
    printout is one read event hashing exactly what was printed."""
    p = published
    client = CustodyClient(temporal=temporal_client, store=p.store, settings=p.settings)
    printed = {}
    for as_json in (True, False):
        before = _events(p)
        args = argparse.Namespace(sha256=p.discharge, tenant=p.tenant, json=as_json)
        out = io.StringIO()
        with redirect_stdout(out):
            assert await cli_result(args, client) == 0
        event = _new_event(p, before)
        assert event.bytes_sha256 == hashlib.sha256(out.getvalue().encode()).hexdigest()
        printed[as_json] = out.getvalue()
    data = json.loads(printed[True])
    assert data["fields"]["admitted"]["value"] == "2026-03-03"
    assert set(data["fields"]["clinician"]) == {"state", "value", "confidence", "page", "box"}
    assert "-- fields (discharge)" in printed[False]
    assert "admitted" in printed[False] and "2026-03-03" in printed[False]


def test_egress_read_sdk_result_records_the_view_it_hands_out(
    temporal_client: Client, published: Published
) -> None:
    """``starter.result()`` appends one ``read`` event hashing the view's JSON, naming the actor."""
    p = published
    client = CustodyClient(temporal=temporal_client, store=p.store, settings=p.settings)
    before = _events(p)
    view = read_result(client, p.sha256, p.tenant, actor="svc:referrals")
    event = _new_event(p, before)
    assert view.text == p.text
    assert event.kind is eg.EgressKind.READ
    assert event.bytes_sha256 == hashlib.sha256(view.model_dump_json().encode()).hexdigest()
    assert (event.actor, event.documents, event.policy) == ("svc:referrals", [p.sha256], "read")
    again = _events(p)
    read_result(client, p.sha256, p.tenant)  # no actor given: the OS user, marked sdk:
    assert _new_event(p, again).actor.startswith("sdk:")


def test_egress_export_bundle_records_the_zip_hash(published: Published, tmp_path: Path) -> None:
    """An evidence export appends one ``export`` event hashing the zip file written."""
    p = published
    before = _events(p)
    bundle = export_bundle(p.store, p.sha256, p.tenant, tmp_path / "b.zip", actor="auditor")
    event = _new_event(p, before)
    assert event.kind is eg.EgressKind.EXPORT
    assert event.bytes_sha256 == hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert (event.actor, event.policy) == ("auditor", "export")
    assert event.documents == [p.sha256]


class _LedgerDown(LocalStore):
    """A stand-in to inject a fault: the real local store, except that no ledger
    object can be created, as when the backend fails between a read and the event."""

    def create(self, key: str, data: bytes) -> bool:
        if key.startswith("ledger/"):
            raise StoreUnavailable(key)
        return super().create(key, data)


async def test_egress_unrecorded_read_hands_nothing_out(
    temporal_client: Client, published: Published, tmp_path: Path
) -> None:
    """Without the event: the edge answers 503 STORE_UNAVAILABLE, no bundle, no CLI output."""
    p = published
    down = _LedgerDown(p.settings.objects_dir)
    client = CustodyClient(temporal=temporal_client, store=down, settings=p.settings)
    before = _events(p)
    async with EdgeHarness(client) as edge:
        resp = await edge.http.get(f"/v1/documents/{p.sha256}", headers=p.auth)
    assert resp.status_code == 503 and resp.json()["error"] == "STORE_UNAVAILABLE"
    assert p.text.splitlines()[0] not in resp.text
    with pytest.raises(StoreUnavailable):
        export_bundle(down, p.sha256, p.tenant, tmp_path / "b.zip", actor="auditor")
    with pytest.raises(StoreUnavailable):  # the SDK's read returns nothing either
        read_result(client, p.sha256, p.tenant)
    assert not (tmp_path / "b.zip").exists()
    # The CLI's handler in this process, on the faulty store: nothing reaches stdout.
    args = argparse.Namespace(sha256=p.sha256, tenant=p.tenant, json=True)
    printed = io.StringIO()
    with redirect_stdout(printed), pytest.raises(StoreUnavailable):
        await cli_result(args, client)
    assert printed.getvalue() == ""
    assert _events(p) == before
