"""The whole path on the production store: S3 through boto3, against moto's server over HTTP."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from custody import ids
from custody.ledger.signing import public_keys
from custody.models import DocState
from custody.stores.s3 import S3Store
from starter.client.submit import submit, wait
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import verify_document
from tests.helpers import Rig, make_settings


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


async def test_s3_pipeline_publishes_and_verifies_on_s3(
    rig: Rig,
    s3_endpoint: str,
) -> None:
    """Every object in S3; evidence objects under Object Lock; the record verifies from S3."""
    settings = make_settings(
        rig.home,
        rig.address,
        store="s3",
        s3_endpoint_url=s3_endpoint,
        s3_bucket="custody-pipeline",
        s3_prefix="evidence/",
        s3_access_key_id="test",
        s3_secret_access_key="test",
        s3_object_lock_days=1,
    )
    store = S3Store.from_settings(settings)
    store.ensure_bucket(object_lock=True)
    async with rig.pipeline(settings, rig.engine, store=store) as custody:
        sub = await submit(custody, rig.corpus / "ocr_gt" / "tess_phototest.tif", tenant=rig.tenant)
        res = await wait(custody, sub.sha256, tenant=rig.tenant)
        again = await submit(
            custody, rig.corpus / "ocr_gt" / "tess_phototest.tif", tenant=rig.tenant
        )
    assert res.state is DocState.PUBLISHED
    assert again.deduplicated and again.record is not None
    assert store.exists(ids.record_key(sub.sha256, rig.tenant))
    assert not store.exists(ids.intake_key(sub.sha256, rig.tenant))
    assert list(store.list(ids.work_prefix(sub.sha256, rig.tenant))) == []
    anchors = TrustAnchors.from_settings(settings)
    assert verify_document(store, public_keys(store), sub.sha256, rig.tenant, anchors=anchors).ok
    for key in (ids.record_key(sub.sha256, rig.tenant), ids.source_key(sub.sha256, rig.tenant)):
        head = store.client.head_object(Bucket=store.bucket, Key=store.prefix + key)
        assert head["ObjectLockMode"] == "COMPLIANCE", key
    ledger_key = next(iter(store.list(f"ledger/{rig.tenant}/tile/")))
    head = store.client.head_object(Bucket=store.bucket, Key=store.prefix + ledger_key)
    assert head["ObjectLockMode"] == "COMPLIANCE"
