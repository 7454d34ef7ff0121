"""What upstream Python systems call: ``submit`` a document, ``wait`` for it.

    custody = await starter.connect()
    sub = await starter.submit(custody, "referral.pdf", source_id="fax-7", tenant="clinic-a")
    result = await starter.wait(custody, sub.sha256, tenant="clinic-a")

A submission is keyed by the SHA-256 of its exact bytes (scoped by tenant).
Submitting the same bytes again, while running or long after, converges on the
one workflow and its one result: no second OCR, no second record.

The workflow is started by its registered name, so this module never imports
the workflow code (and, through it, the activities and their libraries).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.errors import Code, DocumentRejected
from custody.fields import DocType
from custody.models import DocState, DocumentInput, DocumentResult, ResultRecord
from custody.queues import (
    PRIORITY_RESERVED,
    SA_REASON,
    SA_SHA256,
    SA_SOURCE_ID,
    SA_STATE,
    SA_TENANT,
    WORKFLOW_NAME,
    scheduling,
)
from custody.refs import RefKeys
from starter.client import backlog, route
from starter.client.connect import CustodyClient
from starter.client.read import from_store, published, settled

_CHUNK = 1 << 20


@dataclass(frozen=True)
class AdmissionRequest:
    """New work an admission hook may refuse: asked before any byte is uploaded."""

    workflow_id: str
    size_bytes: int
    source_id: str | None
    tenant: str | None
    #: The caller asks for the reserved lane (an urgent document).
    priority: bool = False


#: Raises (the edge's ``AdmissionRejected``) to refuse; returns to admit.
Admit = Callable[[AdmissionRequest], Awaitable[None]]


class Submission(BaseModel):
    sha256: str
    tenant: str | None
    workflow_id: str
    state: DocState
    #: True when these bytes were already known: nothing new was started.
    deduplicated: bool
    size_bytes: int
    record: ResultRecord | None = None


async def submit(
    client: CustodyClient,
    document: str | Path | bytes,
    *,
    source_id: str | None = None,
    tenant: str | None = None,
    signer: dict[str, str] | None = None,
    admit: Admit | None = None,
    priority: bool = False,
    captured_at: datetime | None = None,
    document_type: DocType | str | None = None,
    fairness_weight: float | None = None,
) -> Submission:
    """Hand one document to Custody; returns at once (OCR runs asynchronously).

    With ``admit``, new work is asked for first (documents already published
    are not): the hook raises to refuse, and ``priority`` asks for a reserved lane.
    ``document_type`` names the type (``custody.fields.DocType``); else it is classified.
    ``fairness_weight`` is the document's share of a busy queue; else it falls
    with the tenant's backlog (``starter.client.backlog``).
    """
    ids.check_tenant(tenant)
    ids.check_source_id(source_id)
    with _open(document) as src:
        sha256, size = _hash_stream(src, client.settings.limits.max_bytes)
        wid = ids.workflow_id(sha256, tenant)
        # The published record outlives Temporal's retention: it is the dedupe index.
        record = published(client.store, sha256, tenant)
        if record is not None:
            return Submission(
                sha256=sha256,
                tenant=tenant,
                workflow_id=wid,
                state=DocState.PUBLISHED,
                deduplicated=True,
                size_bytes=size,
                record=record,
            )
        # So is a quarantine or rejection: never processed again without an operator.
        outcome = settled(client.store, sha256, tenant)
        if outcome is not None:
            return Submission(
                sha256=sha256,
                tenant=tenant,
                workflow_id=wid,
                state=outcome.state,
                deduplicated=True,
                size_bytes=size,
            )
        if admit is not None:  # refuse before any upload
            await admit(AdmissionRequest(wid, size, source_id, tenant, priority))
        src.seek(0)
        client.store.create_from_file(ids.intake_key(sha256, tenant), src)
    intake = ids.intake_key(sha256, tenant)
    if fairness_weight is None:
        fairness_weight = await backlog.fairness_weight(client, tenant)
    inp = DocumentInput(
        sha256=sha256,
        tenant=tenant,
        source_id=source_id,
        intake_key=intake,
        size_bytes=size,
        submitted_at=datetime.now(UTC),
        io_task_queue=client.settings.io_task_queue,
        # The GPU pool while it keeps up, else the CPU pool (starter.client.route).
        ocr_task_queue=await route.ocr_queue(client),
        signer=signer or {},
        captured_at=captured_at,
        document_type=DocType(document_type) if document_type is not None else None,
        # The reserved lane goes ahead in every task queue too, OCR's included.
        priority=PRIORITY_RESERVED if priority else None,
        fairness_weight=fairness_weight,
        # Signed with the keyring that seals the store: workers refuse anything else.
        intake_sig=RefKeys.for_store(client.store).sign(intake, tenant, sha256),
    )
    started = await _start(client, inp, wid)
    return Submission(
        sha256=sha256,
        tenant=tenant,
        workflow_id=wid,
        state=DocState.ACCEPTED,
        deduplicated=not started,
        size_bytes=size,
    )


async def _start(client: CustodyClient, inp: DocumentInput, wid: str) -> bool:
    """Start the document's workflow; False when one already held this ID.

    ID conflict policy USE_EXISTING: a second submission while the first runs
    attaches to it instead of failing or starting a twin. ID reuse policy
    ALLOW_DUPLICATE_FAILED_ONLY: a run that ended published, rejected or
    quarantined is the answer for these bytes (quarantine is released only by
    an explicit operator action), while a run that failed, timed out or was
    terminated, which the workflow never does on its own, may be started again.
    """
    try:
        handle = await client.temporal.start_workflow(
            WORKFLOW_NAME,
            inp,
            result_type=DocumentResult,
            id=wid,
            task_queue=inp.io_task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=_search_attributes(inp),
            static_summary=_summary(inp),
            # Workflow tasks share the I/O queue fairly too, not only the activities.
            priority=scheduling(inp.tenant, inp.priority, inp.fairness_weight),
        )
    except WorkflowAlreadyStartedError:
        return False
    response = getattr(handle, "_start_workflow_response", None)
    return bool(getattr(response, "started", True))


def _search_attributes(inp: DocumentInput) -> TypedSearchAttributes:
    pairs: list[SearchAttributePair[str]] = [
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_SHA256), inp.sha256),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_STATE), DocState.ACCEPTED.value),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_REASON), ""),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_TENANT), inp.tenant or ""),
        SearchAttributePair(SearchAttributeKey.for_keyword(SA_SOURCE_ID), inp.source_id or ""),
    ]
    return TypedSearchAttributes(pairs)


def _summary(inp: DocumentInput) -> str:
    # Shown in the Temporal UI: hashes and identifiers only, never names or text.
    tenant = f" tenant={inp.tenant}" if inp.tenant else ""
    return f"document {inp.sha256[:12]}{tenant} {inp.size_bytes} bytes"


async def wait(client: CustodyClient, sha256: str, *, tenant: str | None = None) -> DocumentResult:
    """Block until the document reaches a terminal state; its result."""
    handle = client.handle(sha256, tenant)
    try:
        return await handle.result()
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
    return from_store(client.store, sha256, tenant)


class _open:
    """A seekable binary stream over a path or bytes (files are never read whole)."""

    def __init__(self, document: str | Path | bytes) -> None:
        self._document = document
        self._stream: BinaryIO | None = None

    def __enter__(self) -> BinaryIO:
        if isinstance(self._document, bytes):
            self._stream = io.BytesIO(self._document)
        else:
            self._stream = Path(self._document).open("rb")
        return self._stream

    def __exit__(self, *exc: object) -> None:
        if self._stream is not None:
            self._stream.close()


def _hash_stream(src: BinaryIO, max_bytes: int) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    while chunk := src.read(_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise DocumentRejected(Code.TOO_LARGE, f"more than {max_bytes} bytes")
        digest.update(chunk)
    return digest.hexdigest(), size
