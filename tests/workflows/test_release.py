"""One real release end to end per channel: outbox, HTTPS and S3, on the real dev server,
workers, stores, renderer and ledger.

One real document is published for the module (the default Tesseract engine). The outbox
is a real directory, so "the recipient has exactly one copy" is a listing; its release also
loses its worker (SIGKILL) between delivery and receipt. The HTTPS recipient is a real
threaded server on 127.0.0.1 that keeps packets by ``Idempotency-Key`` (the one the
channel tests use); it is not listening when the release starts and begins to listen only
once the first delivery attempt has failed. The S3 recipient is a versioned bucket on
moto's server, so a second write of any key would show as a second version.

Every other branch of the workflow runs on stand-ins (test_release_branches.py); the
activities' refusals and re-runs on their own (tests/activities/test_release.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHandle

from activities.egress import provenance
from activities.egress.pdfmeta import read_identity
from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.errors import EgressRefused
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.settings import Settings
from custody.state.egress import SignedReceipt, add_recipient, egress_events, revoke_recipient
from custody.stores.local import LocalStore
from starter.client.release import release, wait_release
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import verify_ledger
from starter.evidence.verify.egress import stored_receipt_checks
from tests.activities.egress.test_channels import _bucket, _free_port, _Recipient
from tests.helpers import make_settings, publish_scan, recipient, running_pipeline, spawn_worker
from tests.published import InHome
from tests.workflows.test_replay import replay_and_keep

DELIVER = "custody.release.deliver"


@dataclass
class Published(InHome):
    settings: Settings
    tenant: str
    sha256: str


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
        tmp_path_factory.mktemp("releases"),
        temporal_address,
        egress_delivery_attempts=4,
        egress_delivery_interval_s=0.5,
        egress_push_deadline_s=5.0,
        egress_s3_endpoint_url=moto_endpoint,
        egress_s3_access_key_id=SecretStr("testing"),
        egress_s3_secret_access_key=SecretStr("testing"),
    )
    tenant = "egress-" + os.urandom(4).hex()
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sha = await publish_scan(custody, corpus, tenant)
    return Published(settings, tenant, sha)


def _register(p: Published, name: str, kind: eg.ChannelKind, target: str | Path) -> str:
    assert add_recipient(p.store, recipient(p.tenant, name, target, kind))
    return name


def _copies(outbox: Path) -> list[str]:
    return sorted(str(p.relative_to(outbox)) for p in outbox.rglob("*") if p.is_file())


def _one_receipt(p: Published, result: eg.ReleaseResult) -> SignedReceipt:
    """The release's receipt, verified, after exactly one egress event and one receipt event."""
    stored = p.store.get(eg.receipt_key(p.tenant, result.release_id))
    signed = SignedReceipt.model_validate_json(stored)
    assert all(c.ok for c in stored_receipt_checks(stored, signed, public_keys(p.store)))
    events = [
        e
        for e in Ledger(p.store, p.tenant).events()
        if e.detail.get("release_id") == result.release_id
    ]
    assert [e.kind for e in events] == [eg.EGRESS_EVENT, eg.RECEIPT_EVENT]
    mine = [e for e in egress_events(p.store, p.tenant) if e.release_id == result.release_id]
    assert len(mine) == 1 and mine[0].bytes_sha256 == eg.packet_sha256(result.files)
    assert signed.receipt.egress_event_seq == mine[0].seq and signed.receipt.files == result.files
    return signed


async def test_release_to_an_outbox_delivers_once_across_a_killed_worker(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, tmp_path: Path
) -> None:
    """SIGKILL between delivery and receipt: one copy, one egress event before one signed
    receipt (on the receipt's second attempt), a verified C2PA claim and identity."""
    p, outbox = published, tmp_path / "outbox"
    to = _register(p, "clinic-b", eg.ChannelKind.OUTBOX, outbox)
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False, with_io_worker=False
    ) as custody:
        doomed = await spawn_worker(
            "workers.io", p.settings, tmp_path / "io.log", faults="release.receipt.start=kill"
        )
        started = await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op:test")
        assert await asyncio.wait_for(doomed.wait(), timeout=240) == -9
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        result = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert result.state is eg.ReleaseState.DELIVERED, result
    assert result.attempts == {"prepare": 1, "render": 1, "record": 1, "deliver": 1, "receipt": 2}
    assert result.policy == "default" and result.policy_sha256 == eg.DEFAULT_POLICY.sha256()
    names = [f.name for f in result.files]
    assert names == [f"document-{p.sha256[:16]}.pdf"]
    rid = result.release_id
    assert _copies(outbox) == sorted([f"{rid}/{names[0]}", f"{rid}/manifest.json"])
    delivered = (outbox / rid / names[0]).read_bytes()
    assert hashlib.sha256(delivered).hexdigest() == result.files[0].sha256
    signed = _one_receipt(p, result)
    # The delivered PDF carries a verified C2PA claim for this release, and the
    # receipt names exactly that manifest; its /ID and XMP name the release too.
    anchor = (p.settings.signing_path / "c2pa" / "ca.pem").read_bytes()
    reading = provenance.read_claim(delivered, "application/pdf", anchor)
    assert reading is not None and reading.verified
    assert reading.claim.release_id == rid and reading.claim.source_sha256s == [p.sha256]
    assert signed.receipt.manifest_sha256s == {names[0]: reading.manifest_sha256}
    identity = read_identity(delivered)
    assert identity is not None and identity.release_id == rid and identity.id_matches
    anchors = TrustAnchors.from_settings(p.settings)
    assert verify_ledger(p.store, public_keys(p.store), p.tenant, anchors=anchors).ok
    await replay_and_keep(temporal_client, result.workflow_id, "release-delivered")


async def test_release_unknown_or_revoked_recipient_refused_before_start(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, tmp_path: Path
) -> None:
    """No workflow starts for a recipient that is not registered, or was revoked."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False, with_io_worker=False
    ) as custody:
        with pytest.raises(EgressRefused) as unknown:
            await release(custody, [p.sha256], to="nobody", tenant=p.tenant, actor="op")
        to = _register(p, "clinic-gone", eg.ChannelKind.OUTBOX, tmp_path / "outbox")
        assert revoke_recipient(custody.store, p.tenant, to, by="op")
        with pytest.raises(EgressRefused) as revoked:
            await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op")
    assert unknown.value.code == "RECIPIENT_UNKNOWN"
    assert revoked.value.code == "RECIPIENT_REVOKED"


async def _first_delivery_failed(handle: WorkflowHandle[Any, Any]) -> None:
    """Until the server says delivery is on its second attempt: the first one failed."""
    for _ in range(1200):
        desc = await handle.describe()
        for pending in desc.raw_description.pending_activities:
            if pending.activity_type.name == DELIVER and pending.attempt >= 2:
                return
        await asyncio.sleep(0.05)
    raise AssertionError("the first delivery attempt never failed")


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
    finally:
        server.stop()
    assert result.state is eg.ReleaseState.DELIVERED, result
    assert (server.posts, list(server.packets)) == (1, [result.release_id])
    receipt = _one_receipt(p, result).receipt
    # The tenant's receipt names what was sent, not what the recipient answered (no oracle);
    # the operator's delivery record keeps the answer.
    sent = server.packets[result.release_id][1]
    assert receipt.delivery.channel is eg.ChannelKind.HTTPS and receipt.delivery.status is None
    assert receipt.delivery.answer_sha256 == hashlib.sha256(sent).hexdigest()
    key = eg.release_delivery_key(p.tenant, result.release_id)
    operator = eg.Delivered.model_validate_json(LocalStore(p.settings.objects_dir).get(key))
    assert operator.status == 200
    assert operator.answer_sha256 == hashlib.sha256(server.answers[0]).hexdigest()
    # Each attempt one POST: the one that got through is the attempt the result counts.
    assert receipt.delivery.attempts == result.attempts["deliver"] >= 2


async def test_release_s3_recipient_delivers_each_object_once(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, moto_endpoint: str
) -> None:
    """To a versioned moto bucket: one version of each file and of the manifest, one receipt."""
    p = published
    bucket, s3 = _bucket(moto_endpoint)  # versioned: a second write would show
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
