"""Scratch expires by age whatever the workers do; orphan intake goes after its grace.

Real local stores with their files' times set back, and for the orphan check
the real ``custody retention sweep`` against the dev server.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.client import Client

from custody import ids
from custody.settings import Settings
from custody.stores.expiry import ScratchExpiry, expire, max_ages
from custody.stores.local import LocalStore
from custody.stores.s3 import S3Store, client_from_settings
from starter.client.connect import CustodyClient
from starter.client.submit import submit
from tests.helpers import custody_cli, make_settings

DAY = 86400.0


def _aged(store: LocalStore, key: str, days: float) -> str:
    store.put(key, b"x")
    when = time.time() - days * DAY
    os.utime(store.root / key, (when, when))
    return key


def test_retention_scratch_expires_old_intake_work_and_manual_only(tmp_path: Path) -> None:
    """Objects past their prefix's age go; younger scratch and every evidence object stay."""
    store, sha = LocalStore(tmp_path), "1" * 64
    old = [
        _aged(store, ids.intake_key(sha, "t"), 8),
        _aged(store, f"{ids.work_prefix(sha, 't')}a1/page-0001.json", 8),
        _aged(store, f"manual/t/{sha}.bin", 31),
    ]
    kept = [
        _aged(store, ids.intake_key("2" * 64, "t"), 1),
        _aged(store, f"manual/t/{'2' * 64}.bin", 8),
        _aged(store, ids.source_key(sha, "t"), 400),
        _aged(store, ids.record_key(sha, "t"), 400),
    ]
    found = expire(store, max_ages(Settings(home=tmp_path)), datetime.now(UTC))
    assert sorted(s.key for s in found) == sorted(old)
    assert not any(store.exists(k) for k in old) and all(store.exists(k) for k in kept)


def test_retention_scratch_holds_a_concluded_documents_only_copy(tmp_path: Path) -> None:
    """Intake bytes of a quarantined document that never reached sources/ are not expired."""
    store, sha = LocalStore(tmp_path), "3" * 64
    intake = _aged(store, ids.intake_key(sha, None), 30)
    store.put(ids.outcome_key(sha, None, "run-1"), b"{}")
    assert expire(store, max_ages(Settings(home=tmp_path)), datetime.now(UTC)) == []
    assert store.exists(intake)


async def test_retention_sweep_deletes_orphans_past_grace_and_spares_workflows(
    temporal_client: Client, temporal_address: str, tmp_path: Path, tenant: str
) -> None:
    """An old intake with no workflow is deleted, a young one reported, one with a run kept."""
    settings = make_settings(tmp_path, temporal_address)
    store = LocalStore(settings.objects_dir)
    custody = CustodyClient(temporal=temporal_client, store=store, settings=settings)
    # No worker polls this queue: the workflow stays running, its intake with it.
    held = await submit(custody, b"%PDF-1.7 held by a running workflow", tenant=tenant)
    held_key = _aged(store, ids.intake_key(held.sha256, tenant), 2)
    old = _aged(store, ids.intake_key("4" * 64, tenant), 2)
    young = _aged(store, ids.intake_key("5" * 64, tenant), 0.001)
    try:
        rc, answer = await custody_cli(settings, "retention", "sweep")
    finally:
        await custody.handle(held.sha256, tenant).terminate("test done")
    assert rc == 0, answer
    orphans = {o["key"]: o["deleted"] for o in answer["orphans"]}
    assert orphans == {old: True, young: False}
    assert not store.exists(old) and store.exists(young) and store.exists(held_key)


def test_retention_scratch_timer_in_the_worker_expires_without_a_run(tmp_path: Path) -> None:
    """The I/O worker's timer thread removes old scratch on its own, with no workflow."""
    store = LocalStore(tmp_path / "objects")
    old = _aged(store, f"{ids.work_prefix('7' * 64, 't')}a1/page-0001.json", 8)
    timer = ScratchExpiry(store, Settings(home=tmp_path, retention_sweep_interval_s=0.05))
    timer.start()
    try:
        for _ in range(100):
            if not store.exists(old):
                break
            time.sleep(0.05)
    finally:
        timer.stop()
    assert not store.exists(old)


def test_retention_scratch_on_s3_reads_object_age_from_the_bucket(
    moto_endpoint: str, tmp_path: Path
) -> None:
    """On S3 (moto server) an object's age is its LastModified; evidence keys are untouched."""
    settings = Settings(
        home=tmp_path,
        store="s3",
        s3_endpoint_url=moto_endpoint,
        s3_bucket=f"custody-{uuid.uuid4().hex[:12]}",
        s3_prefix="site-a",
        s3_access_key_id=SecretStr("testing"),
        s3_secret_access_key=SecretStr("testing"),
    )
    store = S3Store(client_from_settings(settings), settings.s3_bucket, "site-a")
    store.ensure_bucket()
    intake, source = ids.intake_key("8" * 64, "t"), ids.source_key("8" * 64, "t")
    store.create(intake, b"x")
    store.create(source, b"x")
    ages = max_ages(settings)
    assert expire(store, ages, datetime.now(UTC)) == []  # young
    later = datetime.now(UTC) + timedelta(days=8)
    assert [s.key for s in expire(store, ages, later)] == [intake]
    assert not store.exists(intake) and store.exists(source)


@pytest.fixture(autouse=True)
def _short_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUSTODY_ORPHAN_GRACE_S", "3600")
