"""Quarantine review: list, release (runs again into review, recorded) and reject (final)."""

from __future__ import annotations

from custody.ledger.events import Ledger
from custody.models import DocState
from starter.client.submit import submit, wait
from tests.helpers import FailingEngine, Rig, custody_cli
from tests.identities import as_person


async def test_quarantine_release_reruns_and_reject_is_final(
    rig: Rig,
) -> None:
    """Two documents quarantined by an OCR fault: one released (update-with-start: it runs
    again and waits in review, then a reviewer approves it and it publishes), one rejected."""
    # FailingEngine crashes on every page, which the OCR breaker rightly counts as
    # the engine being down: two documents x three attempts would open it after
    # CUSTODY_BREAKER_FAILURES=5 and end the second document CIRCUIT_OPEN. This
    # test is about quarantine review, not the breaker (tests/workers/test_breaker.py).
    settings = rig.settings(breaker_failures=1000)
    scan = rig.scan()
    async with rig.pipeline(settings, FailingEngine(rig.engine)) as custody:
        subs = [
            await submit(custody, scan + pad, tenant=rig.tenant, source_id="fax-line-2")
            for pad in (b"", b"\0")
        ]
        for sub in subs:
            assert (await wait(custody, sub.sha256, tenant=rig.tenant)).code == "OCR_ERROR"
    keep, drop = subs
    async with rig.pipeline(settings, rig.engine) as custody:
        person = as_person(settings, "auditor-1", store=custody.store)
        rc, listed = await custody_cli(settings, "quarantine", "ls", tenant=rig.tenant)
        assert rc == 0 and {d["sha256"] for d in listed} == {keep.sha256, drop.sha256}
        rc, _ = await custody_cli(
            person,
            "quarantine",
            "reject",
            drop.sha256,
            "--reason",
            "unreadable original",
            tenant=rig.tenant,
        )
        assert rc == 0
        rc, out = await custody_cli(
            person,
            "quarantine",
            "release",
            keep.sha256,
            "--reason",
            "OCR fixed",
            tenant=rig.tenant,
        )
        assert rc == 0 and out["run_id"]
        held = await wait(custody, keep.sha256, tenant=rig.tenant)
        rc_review, waiting = await custody_cli(person, "review", "ls", tenant=rig.tenant)
        rc_ok, approved = await custody_cli(
            person, "review", "resolve", keep.sha256, "--approve", tenant=rig.tenant
        )
        res = await wait(custody, keep.sha256, tenant=rig.tenant)
        rc, listed = await custody_cli(settings, "quarantine", "ls", tenant=rig.tenant)
        rc2, found = await custody_cli(
            settings,
            "evidence",
            "find",
            "--source-id",
            "fax-line-2",
            "--state",
            "published",
            tenant=rig.tenant,
        )
        rc3, verified = await custody_cli(settings, "verify", keep.sha256, tenant=rig.tenant)
    assert held.state is DocState.REVIEW and held.transitions[0].state == "accepted"
    assert rc_review == 0 and [w["reasons"] for w in waiting] == [["RELEASED_FROM_QUARANTINE"]]
    assert rc_ok == 0 and approved["state"] == "published", approved
    assert res.state is DocState.PUBLISHED and res.transitions[-1].by == "auditor-1"
    assert rc == 0 and listed == []
    assert rc2 == 0 and [d["sha256"] for d in found] == [keep.sha256]
    assert rc3 == 0 and verified["ok"] is True
    ledger = Ledger(custody.store, rig.tenant)
    kinds = [(e.kind, e.actor) for e in ledger.for_document(keep.sha256)]
    assert ("quarantine_release", "auditor-1") in kinds
    assert "verified" not in {kind for kind, _ in kinds}  # verifying writes nothing
    assert ("quarantine_reject", "auditor-1") in [
        (e.kind, e.actor) for e in ledger.for_document(drop.sha256)
    ]
    # The reason is kept in the decision object; only its hash is in the ledger.
    assert all("OCR fixed" not in str(e.detail) for e in ledger.for_document(keep.sha256))
