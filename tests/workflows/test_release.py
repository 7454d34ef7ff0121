"""Releases to outside recipients, end to end on the real dev server and real stores.

One real document is published for the module (the default Tesseract engine);
each test then registers its own recipient and releases it. The outbox channel
is a real directory, so "the recipient has exactly one copy" is a listing.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.egress import provenance
from activities.egress.pdfmeta import read_identity
from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.errors import EgressRefused
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.settings import Settings
from custody.state.egress import (
    SignedReceipt,
    add_policy,
    add_recipient,
    egress_events,
    revoke_recipient,
)
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.client.release import release, wait_release
from starter.client.submit import submit, wait
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import verify_ledger
from starter.evidence.verify.egress import stored_receipt_checks
from tests.helpers import make_settings, recipient, running_pipeline, spawn_worker
from tests.workflows.test_replay import replay_and_keep


class Published:
    def __init__(self, settings: Settings, sha256: str, tenant: str, rejected: str) -> None:
        self.settings, self.sha256, self.tenant, self.rejected = settings, sha256, tenant, rejected


@pytest.fixture(scope="module")
async def published(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
) -> Published:
    tenant = "egress-" + os.urandom(4).hex()
    settings = make_settings(
        tmp_path_factory.mktemp("egress"),
        temporal_address,
        egress_delivery_attempts=2,
        egress_delivery_interval_s=0.5,
        egress_push_deadline_s=5.0,
    )
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sub = await submit(custody, corpus / "ocr_gt" / "tess_phototest.tif", tenant=tenant)
        bad = await submit(custody, b"%PDF-1.4 not really a pdf", tenant=tenant)
        await wait(custody, sub.sha256, tenant=tenant)
        await wait(custody, bad.sha256, tenant=tenant)
    return Published(settings, sub.sha256, tenant, bad.sha256)


def _recipient(custody: CustodyClient, tenant: str, outbox: Path, name: str = "clinic-b") -> str:
    add_recipient(custody.store, recipient(tenant, name, outbox))
    return name


def _copies(outbox: Path) -> list[str]:
    return sorted(str(p.relative_to(outbox)) for p in outbox.rglob("*") if p.is_file())


async def test_release_delivers_once_with_receipt_event_and_identity(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, tmp_path: Path
) -> None:
    """A delivered release: one copy in the outbox, one egress event before a signed receipt."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        to = _recipient(custody, p.tenant, tmp_path / "outbox")
        started = await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op:test")
        result = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert result.state is eg.ReleaseState.DELIVERED, result
    assert result.policy == "default" and result.policy_sha256 == eg.DEFAULT_POLICY.sha256()
    names = [f.name for f in result.files]
    assert names == [f"document-{p.sha256[:16]}.pdf"]
    rid = result.release_id
    assert _copies(tmp_path / "outbox") == sorted([f"{rid}/{names[0]}", f"{rid}/manifest.json"])
    delivered = (tmp_path / "outbox" / rid / names[0]).read_bytes()
    import hashlib

    assert hashlib.sha256(delivered).hexdigest() == result.files[0].sha256
    store = LocalStore(p.settings.objects_dir)
    events = [e for e in egress_events(store, p.tenant) if e.release_id == rid]
    assert len(events) == 1
    assert events[0].bytes_sha256 == eg.packet_sha256(result.files)
    assert events[0].recipient == to and events[0].documents == [p.sha256]
    stored = store.get(eg.receipt_key(p.tenant, rid))
    signed = SignedReceipt.model_validate_json(stored)
    assert all(c.ok for c in stored_receipt_checks(stored, signed, public_keys(store)))
    assert signed.receipt.egress_event_seq == events[0].seq
    assert signed.receipt.files == result.files
    # The delivered PDF carries a verified C2PA claim for this release, and the
    # receipt names exactly that manifest; its /ID and XMP name the release too.
    anchor = (p.settings.signing_path / "c2pa" / "ca.pem").read_bytes()
    reading = provenance.read_claim(delivered, "application/pdf", anchor)
    assert reading is not None and reading.verified
    assert reading.claim.release_id == rid and reading.claim.source_sha256s == [p.sha256]
    assert signed.receipt.manifest_sha256s == {names[0]: reading.manifest_sha256}
    identity = read_identity(delivered)
    assert identity is not None and identity.release_id == rid and identity.id_matches
    ledger = Ledger(store, p.tenant)
    kinds = [e.kind for e in ledger.events() if e.detail.get("release_id") == rid]
    assert kinds == [eg.EGRESS_EVENT, eg.RECEIPT_EVENT]  # the event came before the receipt
    anchors = TrustAnchors.from_settings(p.settings)
    assert verify_ledger(store, public_keys(store), p.tenant, anchors=anchors).ok
    await replay_and_keep(temporal_client, result.workflow_id, "release-delivered")


async def test_release_ten_concurrent_requests_deliver_one_packet(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, tmp_path: Path
) -> None:
    """Ten identical requests at once converge on one workflow and one delivery."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        to = _recipient(custody, p.tenant, tmp_path / "outbox", name="clinic-ten")
        starts = await asyncio.gather(
            *(release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op") for _ in range(10))
        )
        assert len({s.release_id for s in starts}) == 1
        result = await asyncio.wait_for(wait_release(custody, starts[0].release_id), 240)
    assert result.state is eg.ReleaseState.DELIVERED
    assert len(_copies(tmp_path / "outbox")) == 2  # the PDF and the manifest, once
    store = LocalStore(p.settings.objects_dir)
    assert (
        len([e for e in egress_events(store, p.tenant) if e.release_id == result.release_id]) == 1
    )


@pytest.mark.parametrize("case", ["rejected", "unknown", "other-tenant"])
async def test_release_refuses_what_is_not_published_here(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, tmp_path: Path, case: str
) -> None:
    """Rejected, unknown or another tenant's documents are refused: nothing leaves, no event."""
    p = published
    doc = {"rejected": p.rejected, "unknown": "ab" * 32, "other-tenant": p.sha256}[case]
    tenant = "someone-else" if case == "other-tenant" else p.tenant
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        to = _recipient(custody, tenant, tmp_path / "outbox", name=f"r-{case}")
        before = len(list(egress_events(custody.store, tenant)))
        started = await release(custody, [doc], to=to, tenant=tenant, actor="op")
        result = await asyncio.wait_for(wait_release(custody, started.release_id), 120)
        after = len(list(egress_events(custody.store, tenant)))
    expected = {"rejected": "NOT_PUBLISHED", "unknown": "DOCUMENT_UNKNOWN"}
    assert result.state is eg.ReleaseState.REFUSED
    assert result.code == expected.get(case, "DOCUMENT_UNKNOWN")
    assert after == before and not (tmp_path / "outbox").exists()
    if case == "rejected":
        await replay_and_keep(temporal_client, result.workflow_id, "release-refused")


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
        to = _recipient(custody, p.tenant, tmp_path / "outbox", name="clinic-gone")
        assert revoke_recipient(custody.store, p.tenant, to, by="op")
        with pytest.raises(EgressRefused) as revoked:
            await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op")
    assert unknown.value.code == "RECIPIENT_UNKNOWN"
    assert revoked.value.code == "RECIPIENT_REVOKED"


async def test_release_uses_the_policy_pinned_at_start(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine, tmp_path: Path
) -> None:
    """A policy changed while the release waits for a worker does not change what leaves."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False, with_io_worker=False
    ) as custody:
        to = _recipient(custody, p.tenant, tmp_path / "outbox", name="clinic-pin")
        v1 = eg.Policy(name="text-only", include=("text",), c2pa=False)
        add_policy(custody.store, p.tenant, v1)
        started = await release(
            custody, [p.sha256], to=to, policy="text-only", tenant=p.tenant, actor="op"
        )
        add_policy(
            custody.store, p.tenant, eg.Policy(name="text-only", include=("searchable_pdf",))
        )
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        result = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert result.state is eg.ReleaseState.DELIVERED
    assert result.policy_sha256 == v1.sha256()
    assert [f.media_type for f in result.files] == ["text/plain"]


async def test_release_recipient_down_fails_with_code_and_closing_event(
    temporal_client: Client, published: Published, ocr_engine: OcrEngine
) -> None:
    """Past the attempt cap an unreachable recipient fails the release; the ledger says so."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        # The discard port: nobody listens there.
        down = recipient(
            p.tenant, "clinic-down", "http://127.0.0.1:9/packets", eg.ChannelKind.HTTPS
        )
        add_recipient(custody.store, down)
        started = await release(custody, [p.sha256], to="clinic-down", tenant=p.tenant, actor="op")
        result = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert result.state is eg.ReleaseState.FAILED and result.code == "RECIPIENT_UNREACHABLE"
    assert result.attempts["deliver"] == 1  # one activity, its two attempts inside
    ledger = Ledger(LocalStore(p.settings.objects_dir), p.tenant)
    kinds = [e.kind for e in ledger.events() if e.detail.get("release_id") == result.release_id]
    assert kinds == [eg.EGRESS_EVENT, eg.FAILED_EVENT]
    await replay_and_keep(temporal_client, result.workflow_id, "release-failed")


@pytest.mark.slow
@pytest.mark.parametrize("point", ["release.deliver.start", "release.receipt.start"])
async def test_release_worker_killed_mid_release_delivers_exactly_once(
    temporal_client: Client,
    published: Published,
    ocr_engine: OcrEngine,
    tmp_path: Path,
    point: str,
) -> None:
    """SIGKILL before delivery, or between delivery and receipt: one copy, one receipt."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False, with_io_worker=False
    ) as custody:
        to = _recipient(custody, p.tenant, tmp_path / "outbox", name=f"k-{point.split('.')[1]}")
        doomed = await spawn_worker(
            "workers.io", p.settings, tmp_path / "io-1.log", faults=f"{point}=kill"
        )
        started = await release(custody, [p.sha256], to=to, tenant=p.tenant, actor="op")
        assert await asyncio.wait_for(doomed.wait(), timeout=240) == -9
        healthy = await spawn_worker("workers.io", p.settings, tmp_path / "io-2.log")
        try:
            result = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
        finally:
            healthy.terminate()
            await healthy.wait()
    assert result.state is eg.ReleaseState.DELIVERED
    assert len(_copies(tmp_path / "outbox")) == 2
    store = LocalStore(p.settings.objects_dir)
    rid = result.release_id
    assert len([e for e in egress_events(store, p.tenant) if e.release_id == rid]) == 1
    receipts = [
        e
        for e in Ledger(store, p.tenant).events()
        if e.kind == eg.RECEIPT_EVENT and e.detail.get("release_id") == rid
    ]
    assert len(receipts) == 1
    anchors = TrustAnchors.from_settings(p.settings)
    assert verify_ledger(store, public_keys(store), p.tenant, anchors=anchors).ok
