"""Releases over the real channels: an HTTP recipient that comes back, and S3 (moto).

One real document is published for the module (the default Tesseract engine).
The HTTP recipient is a real threaded server on 127.0.0.1 that keeps packets by
``Idempotency-Key`` (the one the channel tests use); it is not listening when
the release starts and begins to listen only once the first delivery attempt
has failed. The S3 recipient is a versioned bucket on moto's server, so a
second write of any key would show as a second version.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHandle

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.settings import Settings
from custody.state.egress import SignedReceipt, add_recipient, egress_events
from custody.stores.local import LocalStore
from starter.client.release import release, wait_release
from starter.evidence.verify.egress import stored_receipt_checks
from tests.activities.egress.test_channels import _free_port, _Recipient
from tests.helpers import make_settings, publish_scan, recipient, running_pipeline

DELIVER = "custody.release.deliver"


@dataclass
class Published:
    settings: Settings
    tenant: str
    sha256: str

    @property
    def store(self) -> LocalStore:
        return LocalStore(self.settings.objects_dir)


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="module")
async def published(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
    moto_endpoint: str,
) -> Published:
    settings = make_settings(
        tmp_path_factory.mktemp("release-channels"),
        temporal_address,
        egress_delivery_attempts=4,
        egress_delivery_interval_s=0.5,
        egress_push_deadline_s=5.0,
        egress_s3_endpoint_url=moto_endpoint,
        egress_s3_access_key_id=SecretStr("testing"),
        egress_s3_secret_access_key=SecretStr("testing"),
    )
    tenant = "channels-" + os.urandom(4).hex()
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sha = await publish_scan(custody, corpus, tenant)
    return Published(settings, tenant, sha)


def _register(p: Published, name: str, kind: eg.ChannelKind, target: str) -> str:
    assert add_recipient(p.store, recipient(p.tenant, name, target, kind))
    return name


async def _first_delivery_failed(handle: WorkflowHandle[Any, Any]) -> None:
    """Until the server says delivery is on its second attempt: the first one failed."""
    for _ in range(1200):
        desc = await handle.describe()
        for pending in desc.raw_description.pending_activities:
            if pending.activity_type.name == DELIVER and pending.attempt >= 2:
                return
        await asyncio.sleep(0.05)
    raise AssertionError("the first delivery attempt never failed")


async def _deliver_attempts(handle: WorkflowHandle[Any, Any]) -> int:
    """The attempt on which delivery finally completed, from the workflow's history."""
    scheduled = {}
    async for event in handle.fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = name
        if event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            if scheduled.get(started.scheduled_event_id) == DELIVER:
                return started.attempt
    raise AssertionError("delivery never started")


def _versioned_bucket(endpoint: str) -> tuple[Any, str]:
    """A fresh versioned bucket on moto: a second write of any key shows as a version."""
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    bucket = f"clinic-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    return s3, bucket


def _one_receipt(p: Published, result: eg.ReleaseResult) -> SignedReceipt:
    """The release's receipt, verified, and exactly one receipt event in the ledger."""
    stored = p.store.get(eg.receipt_key(p.tenant, result.release_id))
    signed = SignedReceipt.model_validate_json(stored)
    assert all(c.ok for c in stored_receipt_checks(stored, signed, public_keys(p.store)))
    events = [
        e
        for e in Ledger(p.store, p.tenant).events()
        if e.detail.get("release_id") == result.release_id
    ]
    assert [e.kind for e in events] == [eg.EGRESS_EVENT, eg.RECEIPT_EVENT]
    return signed


async def test_release_https_recipient_down_then_up_delivers_once(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine
) -> None:
    """Down at the first attempt, listening from the second: delivered, one packet, one receipt."""
    p = published
    server = _Recipient(port=_free_port())  # bound only once delivery has failed
    to = _register(p, "clinic-late", eg.ChannelKind.HTTPS, server.url())
    try:
        async with running_pipeline(
            temporal_client, p.settings, ocr_engine, with_ocr_worker=False
        ) as custody:
            started = await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op")
            handle = temporal_client.get_workflow_handle(started.workflow_id)
            await asyncio.wait_for(_first_delivery_failed(handle), 120)
            server.start()
            result = await asyncio.wait_for(wait_release(custody, started.release_id), 120)
            attempts = await _deliver_attempts(handle)
    finally:
        server.stop()
    assert result.state is eg.ReleaseState.DELIVERED, result
    assert attempts >= 2
    assert (server.posts, list(server.packets)) == (1, [result.release_id])
    receipt = _one_receipt(p, result).receipt
    assert receipt.delivery.channel is eg.ChannelKind.HTTPS and receipt.delivery.status == 200
    assert receipt.delivery.answer_sha256 == hashlib.sha256(server.answers[0]).hexdigest()
    mine = [e for e in egress_events(p.store, p.tenant) if e.release_id == result.release_id]
    assert len(mine) == 1


async def test_release_s3_recipient_delivers_each_object_once(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, moto_endpoint: str
) -> None:
    """To a versioned moto bucket: one version of each file and of the manifest, one receipt."""

    p = published
    s3, bucket = _versioned_bucket(moto_endpoint)
    to = _register(p, "clinic-s3", eg.ChannelKind.S3, f"s3://{bucket}/inbox")
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        started = await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op")
        result = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert result.state is eg.ReleaseState.DELIVERED, result
    rid, pdf = result.release_id, result.files[0]
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert sorted(v["Key"] for v in versions) == [
        f"inbox/{rid}/{pdf.name}",
        f"inbox/{rid}/manifest.json",
    ]
    body = s3.get_object(Bucket=bucket, Key=f"inbox/{rid}/{pdf.name}")["Body"].read()
    assert hashlib.sha256(body).hexdigest() == pdf.sha256
    receipt = _one_receipt(p, result).receipt
    assert receipt.delivery.channel is eg.ChannelKind.S3 and receipt.files == result.files


async def test_release_s3_outage_then_back_delivers_once(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine
) -> None:
    """The recipient's S3 is down at the first attempt and back on its port for a later one:
    delivered, one version of each object, one receipt."""
    from moto.server import ThreadedMotoServer

    p, port = published, _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    s3, bucket = _versioned_bucket(endpoint)
    server.stop()  # the outage: nothing listens on the port (moto keeps the bucket in memory)
    settings = p.settings.model_copy(update={"egress_s3_endpoint_url": endpoint})
    to = _register(p, "clinic-s3-late", eg.ChannelKind.S3, f"s3://{bucket}/inbox")
    back = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    try:
        async with running_pipeline(
            temporal_client, settings, ocr_engine, with_ocr_worker=False
        ) as custody:
            started = await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op")
            handle = temporal_client.get_workflow_handle(started.workflow_id)
            await asyncio.wait_for(_first_delivery_failed(handle), 120)
            back.start()
            result = await asyncio.wait_for(wait_release(custody, started.release_id), 120)
            attempts = await _deliver_attempts(handle)
        versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    finally:
        back.stop()
    assert result.state is eg.ReleaseState.DELIVERED, result
    assert attempts >= 2
    rid = result.release_id
    assert sorted(v["Key"] for v in versions) == sorted(
        [f"inbox/{rid}/{result.files[0].name}", f"inbox/{rid}/manifest.json"]
    )
    assert _one_receipt(p, result).receipt.delivery.channel is eg.ChannelKind.S3
