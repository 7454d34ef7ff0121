"""Reads carry a purpose of disclosure: the request's, else the tenant policy's.

The session's published documents (``tests/published.py``, the real pipeline) are
copied for the module under a tenant given an API key. Each way content is read
(``GET /v1/documents/{sha256}?purpose=``, ``custody result --purpose``, the SDK's
``result(purpose=)``) records the request's purpose on its one ``read`` event; with
none asked, the event takes the ``purpose`` of the tenant's own policy (the policy
named ``tenant``), and none before the tenant has one. A malformed purpose over
HTTP is 400 and hands out nothing.
"""

from __future__ import annotations

import argparse
import io
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from custody import egress as eg
from custody.settings import Settings
from custody.state.egress import add_policy, egress_events
from custody.state.tenant_policy import TENANT_POLICY
from custody.stores.local import LocalStore
from starter.cli.documents import result as cli_result
from starter.client.connect import CustodyClient
from starter.client.read import result as read_result
from starter.edge import tenants
from tests.helpers import cli
from tests.published import Published as Shared
from tests.published import copy_published
from tests.starter.edge.conftest import EdgeHarness, custody_client


@dataclass
class Reader:
    settings: Settings
    tenant: str
    auth: dict[str, str]
    sha256: str

    @property
    def store(self) -> LocalStore:
        return LocalStore(self.settings.objects_dir)


@pytest.fixture(scope="module")
def reader(published_once: Shared, tmp_path_factory: pytest.TempPathFactory) -> Reader:
    """The session's documents in this module's copy, a tenant API key, no tenant policy."""
    p = copy_published(published_once, tmp_path_factory.mktemp("read-purpose"))
    _, key = tenants.add(p.store, p.tenant)
    return Reader(p.settings, p.tenant, {"Authorization": f"Bearer {key}"}, p.sha256)


def _purposes(r: Reader) -> list[str | None]:
    return [e.purpose for e in egress_events(r.store, r.tenant) if e.kind is eg.EgressKind.READ]


async def _http(client: Client, r: Reader, query: str = "") -> int:
    async with EdgeHarness(custody_client(client, r.settings)) as edge:
        resp = await edge.http.get(f"/v1/documents/{r.sha256}{query}", headers=r.auth)
    return resp.status_code


async def _cli(client: Client, r: Reader, purpose: str | None) -> None:
    custody = CustodyClient(temporal=client, store=r.store, settings=r.settings)
    args = argparse.Namespace(sha256=r.sha256, tenant=r.tenant, json=True, purpose=purpose)
    with redirect_stdout(io.StringIO()):
        assert await cli_result(args, custody) == 0


async def test_read_purpose_from_the_request_else_the_tenant_policy(
    temporal_client: Client, reader: Reader
) -> None:
    """Asked purposes on each read path; without one, none, then the tenant policy's."""
    r, sdk = (
        reader,
        CustodyClient(temporal=temporal_client, store=reader.store, settings=reader.settings),
    )
    start = len(_purposes(r))
    assert await _http(temporal_client, r) == 200
    assert await _http(temporal_client, r, "?purpose=treatment") == 200
    await _cli(temporal_client, r, "payment")
    read_result(sdk, r.sha256, r.tenant, purpose="operations")
    assert _purposes(r)[start:] == [None, "treatment", "payment", "operations"]
    add_policy(r.store, r.tenant, eg.Policy(name=TENANT_POLICY, purpose="continuity of care"))
    assert await _http(temporal_client, r) == 200
    await _cli(temporal_client, r, None)
    read_result(sdk, r.sha256, r.tenant)
    assert await _http(temporal_client, r, "?purpose=audit") == 200  # the request wins
    assert _purposes(r)[start + 4 :] == ["continuity of care"] * 3 + ["audit"]


async def test_read_purpose_malformed_over_http_is_400_and_nothing_read(
    temporal_client: Client, reader: Reader
) -> None:
    """A control character, only spaces, or past 200 characters: 400, no read event."""
    r = reader
    before = _purposes(r)
    for bad in ("%01x", "%20%20", "x" * 201, "caf%C3%A9"):
        assert await _http(temporal_client, r, f"?purpose={bad}") == 400, bad
    assert _purposes(r) == before


def test_read_purpose_cli_refuses_a_malformed_purpose(reader: Reader, tmp_path: Path) -> None:
    """``custody result --purpose`` with a control character: usage, exit 2, nothing read."""
    before = _purposes(reader)
    code, answer = cli(reader.settings, "result", reader.sha256, "--purpose", "a\x01b",
                       tenant=reader.tenant)  # fmt: skip
    assert (code, answer["error"]) == (2, "USAGE")
    assert _purposes(reader) == before
