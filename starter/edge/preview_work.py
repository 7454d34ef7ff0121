"""A preview's round trip to where OCR runs: scratch in, a short workflow, pages out, nothing left.

The staged body goes to a scratch object under the document's ``work/``
folder (sealed like every stored object, its reference signed), a
``PreviewWorkflow`` runs the one preview activity on the OCR workers' queue,
and the pages it wrote are read back here. Both scratch objects are deleted
when the work ends, on every path: a preview the edge stopped waiting for
still cleans up once its workflow closes, and scratch expiry removes what a
crashed edge left (``custody.stores.expiry``). The workflow's history holds
keys, the hash, counts and the engine's name (``custody.previews``).
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from uuid import uuid4

from temporalio.common import Priority, WorkflowIDReusePolicy

from custody.models import PageText
from custody.previews import PREVIEW_WORKFLOW_NAME, PreviewInput, PreviewResult, preview_prefix
from custody.queues import PRIORITY_RESERVED, fairness_key
from custody.refs import RefKeys
from custody.stores import ObjectStore
from starter.client.connect import CustodyClient
from starter.edge.upload import Staged

#: Beyond the activity's own bound: the workflow's whole life, a hard end.
_WORKFLOW_SLACK = timedelta(seconds=30)

__all__ = ["read_on_workers"]


async def read_on_workers(
    client: CustodyClient, staged: Staged, tenant: str, ends: float
) -> tuple[list[PageText], PreviewResult]:
    """The pages the OCR workers read from ``staged``, due by ``ends`` (the loop's clock)."""
    loop = asyncio.get_running_loop()
    inp = PreviewInput(
        preview_id=uuid4().hex,
        sha256=staged.sha256,
        tenant=tenant,
        media_type=staged.media_type,
        source_key="",
        deadline_s=max(0.001, ends - loop.time()),
        ocr_task_queue=client.settings.ocr_task_queue,
    )
    prefix = preview_prefix(inp.sha256, tenant, inp.preview_id)
    try:
        inp = await asyncio.to_thread(_put_source, client.store, staged, inp, prefix)
        # What is left once the body is there: the worker stops at the same moment.
        inp = inp.model_copy(update={"deadline_s": max(0.001, ends - loop.time())})
        result: PreviewResult = await client.temporal.execute_workflow(
            PREVIEW_WORKFLOW_NAME,
            inp,
            id=f"preview-{inp.preview_id}",
            task_queue=client.settings.io_task_queue,
            result_type=PreviewResult,
            execution_timeout=timedelta(seconds=inp.deadline_s) + _WORKFLOW_SLACK,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            static_summary=f"preview {inp.sha256[:12]}",
            # Its workflow tasks go ahead of a document backlog's too, as its activity does.
            priority=Priority(priority_key=PRIORITY_RESERVED, fairness_key=fairness_key(tenant)),
        )
        raw = await asyncio.to_thread(client.store.get, result.pages_key)
        return [PageText.model_validate(p) for p in json.loads(raw)], result
    finally:
        await asyncio.to_thread(_clear, client.store, prefix)


def _put_source(store: ObjectStore, staged: Staged, inp: PreviewInput, prefix: str) -> PreviewInput:
    key = f"{prefix}source"
    with staged.path.open("rb") as src:
        store.create_from_file(key, src)
    sig = RefKeys.for_store(store).sign(key, inp.tenant, inp.sha256)
    return inp.model_copy(update={"source_key": key, "source_sig": sig})


def _clear(store: ObjectStore, prefix: str) -> None:
    for key in list(store.list(prefix)):
        store.delete(key)
