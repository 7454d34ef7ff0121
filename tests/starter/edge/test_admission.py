"""Admission control through the Python ``submit``: bounds, fairness, reserved lane, pause."""

from __future__ import annotations

import hashlib

import pytest
from temporalio.client import Client

from custody.errors import AdmissionRejected
from starter.client.submit import submit, wait
from starter.edge.admission import Admission, set_paused
from tests.helpers import running_pipeline
from tests.starter.edge.conftest import QuickEngine, SettingsFactory, custody_client, png


async def test_admission_document_bound_engages_and_releases_as_work_drains(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """Past max_waiting documents submit raises, and admits again once the waiting ones finish."""
    settings = settings_for(admission_max_waiting=2)
    client = custody_client(temporal_client, settings)
    admission = Admission(client)
    first = [await submit(client, png(i), tenant=tenant, admit=admission.admit) for i in (1, 2)]
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(3), tenant=tenant, admit=admission.admit)
    assert refused.value.reason == "waiting_documents"
    assert refused.value.retry_after >= 1
    async with running_pipeline(temporal_client, settings, QuickEngine()) as running:
        for sub in first:
            assert (await wait(running, sub.sha256, tenant=tenant)).state == "published"
        third = await submit(client, png(3), tenant=tenant, admit=admission.admit)
    assert third.state == "accepted"
    assert admission.stats().drain_per_s > 0


async def test_admission_byte_bound_engages(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """A document that would take bytes waiting past max_bytes is refused as waiting_bytes."""
    size = len(png(10))
    settings = settings_for(admission_max_bytes=size + size // 2)
    client = custody_client(temporal_client, settings)
    admission = Admission(client)
    await submit(client, png(10), tenant=tenant, admit=admission.admit)
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(11), tenant=tenant, admit=admission.admit)
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
    admission = Admission(client)
    outcomes = []
    for i in range(6):
        try:
            await submit(
                client, png(20 + i), source_id="noisy", tenant=tenant, admit=admission.admit
            )
            outcomes.append("ok")
        except AdmissionRejected as err:
            outcomes.append(err.reason)
    quiet = await submit(client, png(40), source_id="quiet", tenant=tenant, admit=admission.admit)
    assert outcomes == ["ok"] * 3 + ["source_rate"] * 3
    assert quiet.state == "accepted"


async def test_admission_reserved_lane_served_while_normal_lane_full(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """With the normal lane full a priority document is admitted, up to the reserved places."""
    settings = settings_for(admission_max_waiting=1, admission_reserved=1)
    client = custody_client(temporal_client, settings)
    admission = Admission(client)
    await submit(client, png(50), tenant=tenant, admit=admission.admit)
    with pytest.raises(AdmissionRejected):
        await submit(client, png(51), tenant=tenant, admit=admission.admit)
    urgent = await submit(client, png(51), tenant=tenant, admit=admission.admit, priority=True)
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(52), tenant=tenant, admit=admission.admit, priority=True)
    assert urgent.state == "accepted"
    assert refused.value.reason == "waiting_documents"


async def test_admission_pause_refuses_and_resume_admits(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str
) -> None:
    """A pause stored in the object store refuses every submission until resumed."""
    client = custody_client(temporal_client, settings_for())
    admission = Admission(client)
    set_paused(client.store, True)
    with pytest.raises(AdmissionRejected) as refused:
        await submit(client, png(60), tenant=tenant, admit=admission.admit)
    set_paused(client.store, False)
    resumed = await submit(client, png(60), tenant=tenant, admit=admission.admit)
    assert refused.value.reason == "paused"
    assert resumed.state == "accepted"
    assert (await admission.refresh()).paused is False
