"""The whole path on real parts: Temporal dev server, Tesseract, the local store."""

from __future__ import annotations

import asyncio
import hashlib

from temporalio.client import Client

from activities.scratch import StagingArea
from custody import ids
from custody.models import DocState
from custody.queues import SA_REASON, SA_STATE
from starter.bench.textmetrics import cer, word_f1
from starter.client import review
from starter.client.read import result
from starter.client.submit import submit, wait
from tests.helpers import CountingEngine, FailingEngine, Rig

# tess_phototest.tif: Tesseract's 640x480 bilevel test page, fast to OCR.
# Measured here: word F1 0.97, CER 0.03; thresholds leave margin for CPU noise.
PHOTOTEST_MIN_F1 = 0.85
PHOTOTEST_MAX_CER = 0.15


async def test_pipeline_publishes_real_scan_matching_ground_truth(rig: Rig) -> None:
    """A real bilevel scan goes accepted -> published and its text matches the ground truth."""
    tenant = rig.tenant
    settings = rig.settings()
    scan = rig.corpus / "ocr_gt" / "tess_phototest.tif"
    async with rig.pipeline(settings) as custody:
        sub = await submit(custody, scan, source_id="scanner-1", tenant=tenant)
        res = await wait(custody, sub.sha256, tenant=tenant)
        view = result(custody, sub.sha256, tenant)
    assert res.state is DocState.PUBLISHED, res
    assert [t.state for t in res.transitions] == [
        DocState.ACCEPTED,
        DocState.STAGED,
        DocState.VALIDATED,
        DocState.RECOGNISED,
        DocState.PUBLISHED,
    ]
    truth = (rig.corpus / "ocr_gt" / "tess_phototest.txt").read_text()
    assert word_f1(view.text, truth) >= PHOTOTEST_MIN_F1
    assert cer(view.text, truth) <= PHOTOTEST_MAX_CER
    record = view.record
    assert record.sha256 == sub.sha256 and record.source_id == "scanner-1"
    assert record.media_type == "image/tiff" and record.pages == 1
    assert record.size_bytes == scan.stat().st_size
    assert record.engine == rig.engine.name and record.policy_version.startswith("limits-v1-")
    assert StagingArea(settings.staging_path).files() == []


async def test_pipeline_duplicates_converge_on_one_workflow_one_ocr_one_record(rig: Rig) -> None:
    """Concurrent and later submissions of the same bytes share one run, one OCR, one record."""
    tenant = rig.tenant
    settings = rig.settings()
    engine = CountingEngine(rig.engine)
    scan = rig.scan()
    async with rig.pipeline(settings, engine) as custody:
        subs = await asyncio.gather(*(submit(custody, scan, tenant=tenant) for _ in range(5)))
        assert len({s.workflow_id for s in subs}) == 1
        assert sum(not s.deduplicated for s in subs) == 1
        results = await asyncio.gather(
            *(wait(custody, subs[0].sha256, tenant=tenant) for _ in range(3))
        )
        later = await submit(custody, scan, tenant=tenant)
    assert {r.run_id for r in results} == {results[0].run_id}
    assert later.deduplicated and later.state is DocState.PUBLISHED
    assert later.record is not None and later.record.run_id == results[0].run_id
    assert engine.calls == 1
    records = list(custody.store.list("records/"))
    assert records == [ids.record_key(subs[0].sha256, tenant)]


async def test_pipeline_same_bytes_two_tenants_are_two_documents(rig: Rig) -> None:
    """Tenant scopes the workflow ID: one tenant's dedupe never answers for another."""
    tenant = rig.tenant
    settings = rig.settings()
    scan = rig.scan()
    async with rig.pipeline(settings) as custody:
        a = await submit(custody, scan, tenant=f"{tenant}-a")
        await wait(custody, a.sha256, tenant=f"{tenant}-a")
        b = await submit(custody, scan, tenant=f"{tenant}-b")
        res_b = await wait(custody, b.sha256, tenant=f"{tenant}-b")
    assert a.workflow_id != b.workflow_id
    assert not b.deduplicated and b.state is DocState.ACCEPTED
    assert res_b.state is DocState.PUBLISHED and res_b.tenant == f"{tenant}-b"


async def test_pipeline_exhausted_ocr_retries_quarantine_with_code_and_attempts(rig: Rig) -> None:
    """Fault injected through the engine interface: 3 attempts, then quarantine OCR_ERROR."""
    tenant = rig.tenant
    settings = rig.settings()
    engine = FailingEngine(rig.engine)
    async with rig.pipeline(settings, engine) as custody:
        sub = await submit(custody, rig.corpus / "ocr_gt" / "tess_phototest.tif", tenant=tenant)
        res = await wait(custody, sub.sha256, tenant=tenant)
        rows = await _wait_listed(
            custody.temporal,
            f"{SA_STATE} = 'quarantined' AND {SA_REASON} = 'OCR_ERROR'",
            sub.workflow_id,
        )
    assert res.state is DocState.QUARANTINED and res.code == "OCR_ERROR"
    assert engine.calls == 3
    # The document run and the DocumentQuarantined run it continued as: one id, both listed.
    assert set(rows) == {sub.workflow_id}
    outcome = custody.store.get(ids.outcome_key(sub.sha256, tenant, res.run_id))
    assert b'"code":"OCR_ERROR"' in outcome and b'"ocr":3' in outcome
    # Quarantine keeps the source for review; only scratch is gone.
    assert custody.store.exists(ids.source_key(sub.sha256, tenant))
    assert StagingArea(settings.staging_path).files() == []


async def test_pipeline_low_confidence_waits_in_review_not_published(rig: Rig) -> None:
    """Below the confidence floor the document waits in review (LOW_CONFIDENCE), its OCR
    output held for the reviewer, instead of publishing or ending quarantined."""
    tenant = rig.tenant
    settings = rig.settings(confidence_floor=0.995, confidence_review=0.999)
    async with rig.pipeline(settings) as custody:
        sub = await submit(custody, rig.corpus / "ocr_gt" / "tess_phototest.tif", tenant=tenant)
        res = await wait(custody, sub.sha256, tenant=tenant)
        waiting = await review.status(custody, sub.sha256, tenant)
        await custody.handle(sub.sha256, tenant).terminate("test over")  # nobody will decide
    assert res.state is DocState.REVIEW and waiting.reasons == ["LOW_CONFIDENCE"]
    assert not custody.store.exists(ids.record_key(sub.sha256, tenant))
    assert list(custody.store.list(ids.work_prefix(sub.sha256, tenant)))  # held for review


async def test_pipeline_hash_mismatch_quarantines_without_retry(rig: Rig) -> None:
    """Bytes that do not hash to the workflow ID are quarantined on the first attempt."""
    tenant = rig.tenant
    settings = rig.settings()
    engine = CountingEngine(rig.engine)
    async with rig.pipeline(settings, engine) as custody:
        scan = rig.scan()
        sub = await submit(custody, scan, tenant=tenant)
        await wait(custody, sub.sha256, tenant=tenant)
        # Tamper with a second submission's intake object before its workflow stages it.
        other = scan + b"\0"
        sha = hashlib.sha256(other).hexdigest()
        custody.store.create(ids.intake_key(sha, tenant), scan)
        forged = await submit(custody, other, tenant=tenant)
        res = await wait(custody, forged.sha256, tenant=tenant)
    assert res.state is DocState.QUARANTINED and res.code == "HASH_MISMATCH"
    assert res.attempts["stage"] == 1
    assert engine.calls == 1  # only the first, honest document


async def _wait_listed(client: Client, query: str, wid: str) -> list[str]:
    # Visibility is eventually consistent; poll briefly.
    for _ in range(50):
        rows = [wf.id async for wf in client.list_workflows(query) if wf.id == wid]
        if rows:
            return rows
        await asyncio.sleep(0.2)
    return []
