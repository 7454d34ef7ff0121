"""A worker killed mid-OCR: the document still publishes, exactly once.

The OCR worker runs as a separate process (``python -m workers.ocr``). The
first one is started with the documented fault point ``ocr.after_page=kill``,
so it SIGKILLs itself after finishing page one of a two-page PDF, as a lost
machine would. A second, healthy worker takes the retry after the heartbeat
timeout, resumes at page two, and the document is published once.
"""

from __future__ import annotations

import asyncio

from activities.scratch import StagingArea
from custody import ids
from custody.models import DocState, SignedRecord
from starter.client.submit import submit, wait
from tests.helpers import Rig, spawn_worker


async def test_worker_killed_mid_ocr_publishes_exactly_once(rig: Rig) -> None:
    """SIGKILL after page one; a fresh worker resumes at page two; one record, two OCR attempts."""
    settings, tenant, tmp_path = rig.settings(), rig.tenant, rig.home
    pdf = rig.corpus / "ocr_gt" / "funsdpdf_2pages_86220490_86328049.pdf"
    async with rig.pipeline(settings, with_ocr_worker=False) as custody:
        doomed = await spawn_worker(
            "workers.ocr", settings, tmp_path / "ocr-1.log", faults="ocr.after_page=kill"
        )
        sub = await submit(custody, pdf, tenant=tenant)
        assert await asyncio.wait_for(doomed.wait(), timeout=300) == -9
        healthy = await spawn_worker("workers.ocr", settings, tmp_path / "ocr-2.log")
        try:
            res = await asyncio.wait_for(wait(custody, sub.sha256, tenant=tenant), timeout=400)
        finally:
            healthy.terminate()
            await healthy.wait()
        again = await submit(custody, pdf, tenant=tenant)
    assert res.state is DocState.PUBLISHED and res.pages == 2
    signed = SignedRecord.model_validate_json(custody.store.get(ids.record_key(sub.sha256, tenant)))
    record = signed.record
    assert record.attempts["ocr"] == 2
    assert list(custody.store.list("records/")) == [ids.record_key(sub.sha256, tenant)]
    assert '"pages_done": 1' in (tmp_path / "ocr-2.log").read_text()  # resumed, not restarted
    assert again.deduplicated and again.record == record
    assert StagingArea(settings.staging_path).files() == []
