"""What upstream Python systems call: ``submit`` a document, ``wait`` for it.

    custody = await starter.connect()
    sub = await starter.submit(custody, "referral.pdf", source_id="fax-7", tenant="clinic-a")
    result = await starter.wait(custody, sub.sha256, tenant="clinic-a")

A submission is keyed by the SHA-256 of its exact bytes (scoped by tenant).
Submitting the same bytes again, while running or long after, converges on the
one workflow and its one result: no second OCR, no second record. New work is
asked of admission control first (``starter.client.admission``), the same for
every caller: the HTTP edge, ``custody submit`` and any SDK user.

The workflow is started by its registered name, so this module never imports
the workflow code (and, through it, the activities and their libraries).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel
from temporalio.client import (
    WorkflowContinuedAsNewError,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import CancelledError, WorkflowAlreadyStartedError

from custody import ids
from custody.fields import DocType
from custody.models import (
    DocState,
    DocumentInput,
    DocumentResult,
    DocumentStatus,
    ResultRecord,
    fields_from,
)
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
from custody.reviews import REVIEW_WORKFLOW_NAME
from custody.state.rules import get_policy, known_type
from starter.client import backlog, route
from starter.client.admission import AdmissionRequest
from starter.client.connect import CustodyClient, described
from starter.client.documents import Hashed, measured, opened
from starter.client.read import from_store, published, settled

RUNNING = WorkflowExecutionStatus.RUNNING


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
    document: str | Path | bytes | Hashed,
    *,
    source_id: str | None = None,
    tenant: str | None = None,
    signer: dict[str, str] | None = None,
    priority: bool = False,
    captured_at: datetime | None = None,
    document_type: DocType | str | None = None,
    fairness_weight: float | None = None,
    bypass_admission: bool = False,
) -> Submission:
    """Hand one document to Custody; returns at once (OCR runs asynchronously).

    New work is asked of ``client.admission`` first (documents already
    published are not): it raises :class:`custody.errors.AdmissionRejected` to
    refuse, and ``priority`` asks for the reserved lane. ``bypass_admission``
    is an operator's call only (``custody admission release``: a parked document).
    ``document_type`` names the type: built in (``custody.fields.DocType``) or one the
    tenant's fields policy configures (else ``UsageError`` ``UNKNOWN_TYPE``); None: it is
    classified.
    ``fairness_weight`` is the document's share of a busy queue; else it falls
    with the tenant's backlog (``starter.client.backlog``).
    """
    ids.check_tenant(tenant)
    ids.check_source_id(source_id)
    if document_type is not None:  # refused before a byte is read, as the edge refuses it
        known_type(get_policy(client.store, tenant), str(document_type))
    with opened(document) as src:
        sha256, size = measured(document, src, client.settings.limits.max_bytes)
        wid = ids.workflow_id(sha256, tenant)
        known = _known(client, sha256, tenant, size)
        if known is not None:
            return known
        request = AdmissionRequest(wid, size, source_id, tenant, priority)
        if not bypass_admission:  # refuse before any upload
            await client.admission.admit(request)
        try:
            src.seek(0)
            client.store.create_from_file(ids.intake_key(sha256, tenant), src)
            return await _started(
                client, request, sha256, signer, captured_at, document_type, fairness_weight
            )
        except BaseException:
            # Admitted, then the store or Temporal failed (or the caller left): give
            # the place back now instead of holding it until the grace expires.
            client.admission.release(wid)
            raise


def _known(client: CustodyClient, sha256: str, tenant: str | None, size: int) -> Submission | None:
    """The answer for bytes already concluded here, or None for new work."""
    # The published record outlives Temporal's retention: it is the dedupe index. So is
    # a quarantine or rejection: never processed again without an operator.
    record = published(client.store, sha256, tenant)
    outcome = settled(client.store, sha256, tenant) if record is None else None
    if record is None and outcome is None:
        return None
    return Submission(
        sha256=sha256,
        tenant=tenant,
        workflow_id=ids.workflow_id(sha256, tenant),
        state=DocState.PUBLISHED if outcome is None else outcome.state,
        deduplicated=True,
        size_bytes=size,
        record=record,
    )


async def _started(
    client: CustodyClient,
    request: AdmissionRequest,
    sha256: str,
    signer: dict[str, str] | None,
    captured_at: datetime | None,
    document_type: DocType | str | None,
    fairness_weight: float | None,
) -> Submission:
    """Start the workflow of bytes now in ``intake/``; the submission it answers."""
    tenant = request.tenant
    intake = ids.intake_key(sha256, tenant)
    if fairness_weight is None:
        fairness_weight = await backlog.fairness_weight(client, tenant)
    inp = DocumentInput(
        sha256=sha256,
        tenant=tenant,
        source_id=request.source_id,
        intake_key=intake,
        size_bytes=request.size_bytes,
        submitted_at=datetime.now(UTC),
        io_task_queue=client.settings.io_task_queue,
        # The GPU pool while it keeps up, else the CPU pool (starter.client.route).
        ocr_task_queue=await route.ocr_queue(client),
        signer=signer or {},
        captured_at=captured_at,
        document_type=str(document_type) if document_type is not None else None,
        # The reserved lane goes ahead in every task queue too, OCR's included.
        priority=PRIORITY_RESERVED if request.priority else None,
        fairness_weight=fairness_weight,
        # Signed with the keyring that seals the store: workers refuse anything else.
        intake_sig=RefKeys.for_store(client.store).sign(intake, tenant, sha256),
        review_deadline_s=client.settings.review_deadline_s,
        review_expiry_s=client.settings.review_expiry_s,
    )
    started = await _start(client, inp, request.workflow_id)
    return Submission(
        sha256=sha256,
        tenant=tenant,
        workflow_id=request.workflow_id,
        state=DocState.ACCEPTED,
        deduplicated=not started,
        size_bytes=request.size_bytes,
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
    """Block until the document ends, or waits in ``review`` for a person; its result.

    A document that needs a person continues as a ``DocumentReview`` run: that is
    an answer here (state ``review``), not something to wait out. A cancelled
    one answers ``cancelled``, from the outcome its workflow recorded.
    """
    handle = client.handle(sha256, tenant)
    while True:
        desc = await described(handle)
        if desc is None:
            return from_store(client.store, sha256, tenant)
        if desc.workflow_type == REVIEW_WORKFLOW_NAME and desc.status == RUNNING:
            return await _in_review(client, sha256, tenant, desc.run_id)
        run = client.temporal.get_workflow_handle(
            handle.id, run_id=desc.run_id, result_type=DocumentResult
        )
        try:
            result: DocumentResult = await run.result(follow_runs=False)
            return result
        except WorkflowContinuedAsNewError:
            continue  # into review, or its outcome's own run: look again
        except WorkflowFailureError as err:
            if isinstance(err.cause, CancelledError):
                return from_store(client.store, sha256, tenant)
            raise


async def _in_review(
    client: CustodyClient, sha256: str, tenant: str | None, run_id: str | None
) -> DocumentResult:
    """The document as it waits in review: its status, state ``review``."""
    handle = client.temporal.get_workflow_handle(ids.workflow_id(sha256, tenant), run_id=run_id)
    status: DocumentStatus = await handle.query("status", result_type=DocumentStatus)
    # The document asked about, as it waits: the rest as its status shows it.
    asked = {"sha256": sha256, "tenant": tenant, "state": DocState.REVIEW}
    shown = fields_from(DocumentStatus, status) | asked
    return DocumentResult(**shown, workflow_id=handle.id, run_id=run_id or "")
