"""A worker killed after OCR and before publish: one signed record, every time.

The I/O worker (which publishes) runs as a separate process started with the
documented fault point ``publish.before_record=kill``: it SIGKILLs itself after
the text is written and before the record is created, the worst moment. A
healthy I/O worker then takes over. Over several trials there is exactly one
signed record per document and the ledger verifies.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from custody import ids
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.models import DocState
from starter.client.submit import submit, wait
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import verify_document, verify_ledger
from tests.helpers import Rig, spawn_worker

TRIALS = int(os.environ.get("CUSTODY_PUBLISH_KILL_TRIALS", "2"))
#: The first trial runs in every ``make test``; the others (each about 35 s, most of it
#: the publish heartbeat timing out) are the long form, ``slow``, which CI adds.
_TRIALS = [pytest.param(t, marks=[pytest.mark.slow] if t else []) for t in range(TRIALS)]


@pytest.mark.parametrize("trial", _TRIALS)
async def test_publish_killed_before_record_still_one_signed_fact(rig: Rig, trial: int) -> None:
    """SIGKILL between OCR output and the record: a new worker publishes it once, signed."""
    settings, tenant, tmp_path = rig.settings(), rig.tenant, rig.home
    scan = rig.scan() + b"\0" * trial
    async with rig.pipeline(settings, with_io_worker=False) as custody:
        doomed = await spawn_worker(
            "workers.io", settings, tmp_path / "io-1.log", "publish.before_record=kill"
        )
        sub = await submit(custody, scan, tenant=tenant)
        assert await asyncio.wait_for(doomed.wait(), timeout=300) == -9
        healthy = await spawn_worker("workers.io", settings, tmp_path / "io-2.log")
        try:
            res = await asyncio.wait_for(wait(custody, sub.sha256, tenant=tenant), timeout=300)
        finally:
            healthy.terminate()
            await healthy.wait()
    store = custody.store
    assert res.state is DocState.PUBLISHED
    assert res.attempts["publish"] == 2
    assert list(store.list(f"records/{tenant}/")) == [ids.record_key(sub.sha256, tenant)]
    published = [e for e in Ledger(store, tenant).for_document(sub.sha256) if e.kind == "published"]
    assert len(published) == 1
    keys, anchors = public_keys(store), TrustAnchors.from_settings(settings)
    assert verify_document(store, keys, sub.sha256, tenant, anchors=anchors).ok
    assert verify_ledger(store, keys, tenant, anchors=anchors).ok
