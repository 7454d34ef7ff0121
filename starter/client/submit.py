"""What upstream Python systems call: ``submit`` a document, ``wait`` for it.

    custody = await CustodyClient.connect(Settings())
    sub = await submit(custody, "referral.pdf", source_id="fax-7", tenant="clinic-a")
    result = await wait(custody, sub.sha256, tenant="clinic-a")

A submission is keyed by the SHA-256 of its exact bytes (scoped by tenant).
Submitting the same bytes again, while running or long after, converges on the
one workflow and its one result: no second OCR, no second record.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pydantic import BaseModel
from temporalio.client import Client, WorkflowHandle
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
from custody.converter import data_converter
from custody.errors import Code, DocumentRejected
from custody.keys import load_keyring
from custody.models import (
    DocState,
    DocumentInput,
    DocumentResult,
    OutcomeRecord,
    ResultRecord,
    SignedRecord,
)
from custody.queues import SA_REASON, SA_SHA256, SA_SOURCE_ID, SA_STATE, SA_TENANT
from custody.refs import RefKeys
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from workflows.document import DocumentWorkflow

if TYPE_CHECKING:
    from starter.edge.admission import Admission

_CHUNK = 1 << 20


@dataclass
class CustodyClient:
    """A Temporal client, the object store and the settings they were built from."""

    temporal: Client
    store: ObjectStore
    settings: Settings

    @classmethod
    async def connect(cls, settings: Settings) -> CustodyClient:
        temporal = await Client.connect(
            settings.temporal_address,
            namespace=settings.temporal_namespace,
            data_converter=data_converter(load_keyring(settings)),
        )
        return cls(temporal=temporal, store=open_store(settings), settings=settings)


class Submission(BaseModel):
    sha256: str
    tenant: str | None
    workflow_id: str
    state: DocState
    #: True when these bytes were already known: nothing new was started.
    deduplicated: bool
    size_bytes: int
    record: ResultRecord | None = None


class NotFound(LookupError):
    """No document with that SHA-256 for this tenant."""


async def submit(
    client: CustodyClient,
    document: str | Path | bytes,
    *,
    source_id: str | None = None,
    tenant: str | None = None,
    signer: dict[str, str] | None = None,
    admission: Admission | None = None,
    priority: bool = False,
    captured_at: datetime | None = None,
) -> Submission:
    """Hand one document to Custody; returns at once (OCR runs asynchronously).

    With ``admission``, new work past its bounds raises ``AdmissionRejected``;
    ``priority`` documents may use its reserved lane.
    """
    ids.check_tenant(tenant)
    ids.check_source_id(source_id)
    with _open(document) as src:
        sha256, size = _hash_stream(src, client.settings.limits.max_bytes)
        wid = ids.workflow_id(sha256, tenant)
        # The published record outlives Temporal's retention: it is the dedupe index.
        record = _published(client.store, sha256, tenant)
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
        # --- admission control (starter.edge.admission): refuse before any upload ---
        if admission is not None:
            await admission.admit(wid, size, source_id or tenant or "_", priority=priority)
        # --- end admission control ---
        src.seek(0)
        client.store.create_from_file(ids.intake_key(sha256, tenant), src)
    intake = ids.intake_key(sha256, tenant)
    inp = DocumentInput(
        sha256=sha256,
        tenant=tenant,
        source_id=source_id,
        intake_key=intake,
        size_bytes=size,
        submitted_at=datetime.now(UTC),
        io_task_queue=client.settings.io_task_queue,
        ocr_task_queue=client.settings.ocr_task_queue,
        signer=signer or {},
        captured_at=captured_at,
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
            DocumentWorkflow.run,
            inp,
            id=wid,
            task_queue=inp.io_task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=_search_attributes(inp),
            static_summary=_summary(inp),
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
    handle = _handle(client, sha256, tenant)
    try:
        return await handle.result()
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
    return _from_store(client.store, sha256, tenant)


def _handle(
    client: CustodyClient, sha256: str, tenant: str | None
) -> WorkflowHandle[DocumentWorkflow, DocumentResult]:
    return client.temporal.get_workflow_handle_for(
        DocumentWorkflow.run, ids.workflow_id(sha256, tenant)
    )


def _from_store(store: ObjectStore, sha256: str, tenant: str | None) -> DocumentResult:
    """After Temporal's retention the stored records still answer."""
    record = _published(store, sha256, tenant)
    if record is not None:
        return DocumentResult(
            sha256=sha256,
            tenant=tenant,
            state=DocState.PUBLISHED,
            attempts=record.attempts,
            pages=record.pages,
            mean_confidence=record.mean_confidence,
            record_key=ids.record_key(sha256, tenant),
            text_key=record.text_key,
            workflow_id=record.workflow_id,
            run_id=record.run_id,
            transitions=record.transitions,
        )
    outcome = latest_outcome(store, sha256, tenant)
    if outcome is None:
        raise NotFound(sha256)
    key = ids.outcome_key(sha256, tenant, outcome.run_id)
    return DocumentResult(
        sha256=sha256,
        tenant=tenant,
        state=outcome.state,
        code=outcome.code,
        attempts=outcome.attempts,
        record_key=key,
        workflow_id=outcome.workflow_id,
        run_id=outcome.run_id,
        transitions=outcome.transitions,
    )


def _published(store: ObjectStore, sha256: str, tenant: str | None) -> ResultRecord | None:
    key = ids.record_key(sha256, tenant)
    if not store.exists(key):
        return None
    return SignedRecord.model_validate_json(store.get(key)).record


def latest_outcome(store: ObjectStore, sha256: str, tenant: str | None) -> OutcomeRecord | None:
    """The most recent rejection or quarantine of these bytes, if any."""
    outcomes = [
        OutcomeRecord.model_validate_json(store.get(key))
        for key in store.list(ids.outcome_prefix(sha256, tenant))
    ]
    return max(outcomes, key=lambda o: o.concluded_at, default=None)


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
