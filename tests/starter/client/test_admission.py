"""Admission control in the SDK's ``submit``: bounds, fairness, reserved lane, pause.

Every caller passes it: the SDK here, ``custody submit`` (its handler run in
this process on the same client) and the edge (tests/starter/edge).
"""

from __future__ import annotations

import hashlib
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from temporalio.client import Client

from custody.errors import AdmissionRejected
from starter.cli.documents import submit as cli_submit
from starter.cli.output import Exit
from starter.cli.registry import build_parser
from starter.client.documents import Hashed
from starter.client.pause import set_paused
from starter.client.submit import submit, wait
from tests.helpers import running_pipeline
from tests.starter.edge.conftest import QuickEngine, SettingsFactory, custody_client, png


async def test_admission_document_bound_engages_and_releases_as_work_drains(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """Past max_waiting documents submit raises, and admits again once the waiting ones finish."""
    settings = settings_for(admission_max_waiting=2)
    client = custody_client(temporal_client, settings)
    admission = client.admission
    first = [await submit(client, png(i), tenant=tenant) for i in (1, 2)]
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(3), tenant=tenant)
    assert refused.value.reason == "waiting_documents"
    assert refused.value.retry_after >= 1
    async with running_pipeline(temporal_client, settings, QuickEngine()) as running:
        for sub in first:
            assert (await wait(running, sub.sha256, tenant=tenant)).state == "published"
        third = await submit(client, png(3), tenant=tenant)
    assert third.state == "accepted"
    assert admission.stats().drain_per_s > 0


async def test_admission_byte_bound_engages(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """A document that would take bytes waiting past max_bytes is refused as waiting_bytes."""
    size = len(png(10))
    settings = settings_for(admission_max_bytes=size + size // 2)
    client = custody_client(temporal_client, settings)
    await submit(client, png(10), tenant=tenant)
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(11), tenant=tenant)
    assert refused.value.reason == "waiting_bytes"
    assert list(client.store.list("intake/")) == [
        f"intake/{tenant}/{hashlib.sha256(png(10)).hexdigest()}"
    ]


async def test_admission_noisy_source_does_not_starve_others(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """One source past its token bucket is refused while a quiet source is still admitted."""
    settings = settings_for(admission_source_burst=3, admission_source_rate=0.01)
    client = custody_client(temporal_client, settings)
    outcomes = []
    for i in range(6):
        try:
            await submit(client, png(20 + i), source_id="noisy", tenant=tenant)
            outcomes.append("ok")
        except AdmissionRejected as err:
            outcomes.append(err.reason)
    quiet = await submit(client, png(40), source_id="quiet", tenant=tenant)
    assert outcomes == ["ok"] * 3 + ["source_rate"] * 3
    assert quiet.state == "accepted"


async def test_admission_reserved_lane_served_while_normal_lane_full(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """With the normal lane full a priority document is admitted, up to the reserved places."""
    settings = settings_for(admission_max_waiting=1, admission_reserved=1)
    client = custody_client(temporal_client, settings)
    await submit(client, png(50), tenant=tenant)
    with pytest.raises(AdmissionRejected):
        await submit(client, png(51), tenant=tenant)
    urgent = await submit(client, png(51), tenant=tenant, priority=True)
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(52), tenant=tenant, priority=True)
    assert urgent.state == "accepted"
    assert refused.value.reason == "waiting_documents"


async def test_admission_pause_refuses_and_resume_admits(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """A pause stored in the object store refuses every submission until resumed."""
    client = custody_client(temporal_client, settings_for())
    admission = client.admission
    set_paused(client.store, True)
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(60), tenant=tenant)
    set_paused(client.store, False)
    resumed = await submit(client, png(60), tenant=tenant)
    assert refused.value.reason == "paused"
    assert resumed.state == "accepted"
    assert (await admission.refresh()).paused is False


async def test_admission_pause_refuses_custody_submit_with_the_edges_code(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str, tmp_path: Path
) -> None:
    """While paused, ``custody submit`` refuses with ADMISSION_PAUSED, uploads nothing, exits 1."""
    client = custody_client(temporal_client, settings_for())
    path = tmp_path / "page.png"
    path.write_bytes(png(70))
    argv = ["submit", str(path), "--json", "--tenant", tenant]
    args = build_parser(argv).parse_args(argv)
    set_paused(client.store, True)
    printed = io.StringIO()
    with redirect_stdout(printed):
        status = await cli_submit(args, client)  # the command's handler, on this client
    [row] = json.loads(printed.getvalue())["documents"]
    assert status == Exit.FAILED
    assert (row["state"], row["code"]) == ("refused", "ADMISSION_PAUSED")
    assert row["retry_after"] >= 1
    assert list(client.store.list("intake/")) == []


async def test_submit_takes_a_hashed_file_at_its_measured_hash_without_reading_it_twice(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str, tmp_path: Path
) -> None:
    """A ``Hashed`` file lands under the hash its caller measured: submit does not hash it again.

    The hash given here is deliberately not the bytes' own, to show which one is
    used; staging re-hashes what is stored and quarantines such a document
    HASH_MISMATCH (tests/workflows), so a wrong hash is never published.
    """
    client = custody_client(temporal_client, settings_for())
    path = tmp_path / "staged"
    path.write_bytes(png(80))
    measured = "b" * 64
    sub = await submit(client, Hashed(path, measured, len(png(80))), tenant=tenant)
    await temporal_client.get_workflow_handle(sub.workflow_id).terminate()  # no worker here
    assert (sub.sha256, sub.size_bytes, sub.state) == (measured, len(png(80)), "accepted")
    assert client.store.get(f"intake/{tenant}/{measured}") == png(80)
