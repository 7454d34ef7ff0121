"""After Temporal forgets a finished run, the store still answers, and quarantine holds.

One scan is published and a forged submission is quarantined (``HASH_MISMATCH``)
on the real pipeline; then both runs are deleted from the dev server, as its
retention would, and every read path is asked again.
"""

from __future__ import annotations

import asyncio
import hashlib

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.ledger.events import Ledger
from custody.models import DocState
from starter.client.submit import submit, wait
from tests.helpers import Rig, custody_cli, publish_scan
from tests.identities import as_person

# CANCELLED (seen in CI on a delete) and DEADLINE_EXCEEDED: the dev server's SQLite was too
# busy to finish the call; the loop in _forget asks again. NOT_FOUND on a delete: already gone.
_BUSY = frozenset({RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED})
_RETRY_DELETE = _BUSY | {RPCStatusCode.NOT_FOUND}


async def _forgotten(client: Client, wid: str) -> bool:
    """Whether Temporal no longer knows the workflow ID."""
    try:
        await client.get_workflow_handle(wid).describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return True
        if err.status in _BUSY:
            return False  # ask again on the next pass
        raise
    return False


async def _forget(client: Client, wid: str) -> None:
    """Delete the closed run from the server, as retention does, and wait until it is gone."""
    run = WorkflowExecution(workflow_id=wid)
    request = DeleteWorkflowExecutionRequest(namespace=client.namespace, workflow_execution=run)
    for _ in range(12):  # the server deletes in the background: slow on a busy box
        try:
            await client.workflow_service.delete_workflow_execution(request)
        except RPCError as err:
            if err.status not in _RETRY_DELETE:
                raise
        for _ in range(50):
            if await _forgotten(client, wid):
                return
            await asyncio.sleep(0.2)
    raise AssertionError(f"{wid} still known to Temporal")


async def test_retention_forgotten_runs_answer_from_the_store_and_quarantine_holds(
    rig: Rig,
) -> None:
    """status, verify, evidence export, dedupe and egress answer; the quarantined one stays so."""
    temporal_client, tenant = rig.client, rig.tenant
    settings = rig.settings()
    scan = rig.scan()
    forged = scan + b"\0"
    qsha = hashlib.sha256(forged).hexdigest()
    async with rig.pipeline(settings) as custody:
        sha = await publish_scan(custody, rig.corpus, tenant)
        custody.store.create(ids.intake_key(qsha, tenant), scan)  # not the bytes it claims
        await submit(custody, forged, tenant=tenant)
        quarantined = await wait(custody, qsha, tenant=tenant)
        assert quarantined.state is DocState.QUARANTINED
        for doc in (sha, qsha):
            await _forget(temporal_client, ids.workflow_id(doc, tenant))

        rc, status = await custody_cli(settings, "status", sha, tenant=tenant)
        assert rc == 0 and status["state"] == "published", status
        rc, qstatus = await custody_cli(settings, "status", qsha, tenant=tenant)
        assert qstatus["state"] == "quarantined" and qstatus["code"] == "HASH_MISMATCH", qstatus
        rc, verified = await custody_cli(settings, "verify", sha, tenant=tenant)
        assert rc == 0, verified
        bundle = rig.home / "bundle.zip"
        rc, exported = await custody_cli(
            settings, "evidence", "export", sha, "-o", str(bundle), tenant=tenant
        )
        assert rc == 0 and bundle.stat().st_size > 0, exported
        rc, result = await custody_cli(settings, "result", sha, tenant=tenant)
        assert rc == 0, result
        rc, egress = await custody_cli(settings, "egress", "ls", "--document", sha, tenant=tenant)
        assert rc == 0 and len(egress) >= 2, egress  # the bundle and the result read

        again = await submit(custody, scan, tenant=tenant)
        assert again.deduplicated and again.state is DocState.PUBLISHED
        resent = await submit(custody, forged, tenant=tenant)
        assert resent.deduplicated and resent.state is DocState.QUARANTINED
        assert await _forgotten(temporal_client, ids.workflow_id(qsha, tenant))  # nothing ran
        decide = ("quarantine", "reject", qsha, "--reason", "forged")
        owner = as_person(settings, "owner", store=custody.store)
        rc, decided = await custody_cli(owner, *decide, tenant=tenant)
        assert rc == 0, decided
    ledger = Ledger(custody.store, tenant)
    events = ledger.for_document(qsha)
    assert [e.kind for e in events].count("quarantined") == 1, events
    # The CLI's decision was checkpointed by the CLI itself, not left for a worker.
    assert events[-1].kind == "quarantine_reject"
    assert ledger.checkpoint_size() >= events[-1].seq
