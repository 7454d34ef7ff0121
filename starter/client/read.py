"""Read-side helpers for operators and scripts: status, result, listing.

Temporal answers while it remembers a run; the object store answers after
retention. Neither path returns another tenant's document: every lookup is by
the tenant-scoped workflow ID or key. :func:`result` hands out the text, so it
is an egress event first (``custody.state.egress.hand_out``), like ``custody
result`` and ``GET /v1/documents/{sha256}``.
"""

from __future__ import annotations

import getpass
import json
import socket
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel
from temporalio.client import WorkflowExecutionStatus
from temporalio.common import SearchAttributeKey

from custody import ids
from custody.egress import EgressKind, check_purpose
from custody.errors import NotFound
from custody.fields import Extraction, FieldValueType, FoundField
from custody.models import (
    DocState,
    DocumentResult,
    DocumentStatus,
    OutcomeRecord,
    PageText,
    ResultRecord,
    SignedRecord,
    fields_among,
)
from custody.queues import SA_REASON, SA_SOURCE_ID, SA_STATE, SA_TENANT, WORKFLOW_NAME
from custody.state.egress import hand_out
from custody.stores import ObjectStore
from starter.client.connect import CustodyClient, described

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class StatusView(BaseModel):
    sha256: str
    tenant: str | None
    workflow_id: str
    state: DocState
    code: str | None = None
    attempts: dict[str, int] = {}
    pages: int = 0
    running: bool = False
    started_at: datetime | None = None
    closed_at: datetime | None = None
    transitions: list[dict[str, str]] = []


class FieldView(BaseModel):
    """A field as people see it: a value, or that it needs review, or that it was not there."""

    state: Literal["value", "review", "missing"]
    value: FieldValueType | None = None
    confidence: float = 0.0
    page: int | None = None
    box: list[int] | None = None


_STATES: dict[str, Literal["value", "review", "missing"]] = {
    "found": "value",
    "review": "review",
    "missing": "missing",
}


def field_view(found: FoundField) -> FieldView:
    return FieldView(
        state=_STATES[found.status],
        value=found.value,
        confidence=found.confidence,
        page=found.page,
        box=found.box,
    )


class ResultView(BaseModel):
    record: ResultRecord
    text: str
    pages: list[PageText]
    #: The fields read, by name (none for a generic form, or a record from before fields).
    fields: dict[str, FieldView] = {}


class ListRow(BaseModel):
    sha256: str
    tenant: str | None
    source_id: str | None
    state: str
    code: str | None
    started_at: datetime | None
    workflow_id: str


async def status(client: CustodyClient, sha256: str, tenant: str | None = None) -> StatusView:
    wid = ids.workflow_id(sha256, tenant)
    handle = client.handle(sha256, tenant)
    desc = await described(handle)
    if desc is None:
        return _view(from_store(client.store, sha256, tenant), wid, None, None)
    if desc.status == WorkflowExecutionStatus.RUNNING:
        live: DocumentStatus = await handle.query("status", result_type=DocumentStatus)
        return StatusView(
            sha256=sha256,
            tenant=tenant,
            workflow_id=wid,
            state=live.state,
            code=live.code,
            attempts=live.attempts,
            pages=live.pages,
            running=True,
            started_at=desc.start_time,
            transitions=[_t(t.state, t.at) for t in live.transitions],
        )
    if desc.status == WorkflowExecutionStatus.COMPLETED:
        result = await handle.result()
        return _view(result, wid, desc.start_time, desc.close_time)
    # Failed, terminated or timed out: not a Custody outcome; say so plainly.
    raise NotFound(f"{sha256} ended {desc.status.name if desc.status else 'unknown'}")


def _t(state: DocState, at: datetime) -> dict[str, str]:
    return {"state": state.value, "at": at.isoformat()}


def _view(
    result: DocumentResult, wid: str, started: datetime | None, closed: datetime | None
) -> StatusView:
    return StatusView(
        sha256=result.sha256,
        tenant=result.tenant,
        workflow_id=wid,
        state=result.state,
        code=result.code,
        attempts=result.attempts,
        pages=result.pages,
        started_at=started or (result.transitions[0].at if result.transitions else None),
        closed_at=closed or (result.transitions[-1].at if result.transitions else None),
        transitions=[_t(t.state, t.at) for t in result.transitions],
    )


def result(
    client: CustodyClient,
    sha256: str,
    tenant: str | None = None,
    *,
    actor: str | None = None,
    purpose: str | None = None,
) -> ResultView:
    """The published text, per-page results and fields, once the read is in the ledger.

    The ``read`` egress event names ``actor`` (default ``sdk:user@host``) and
    ``purpose``, the purpose of disclosure (default: the tenant policy's), and
    hashes ``view.model_dump_json()``, the bytes this call hands out; if the
    event cannot be written, this raises and hands out nothing (a malformed
    ``purpose``: ``ValueError``, before anything is read).
    """
    purpose = None if purpose is None else check_purpose(purpose)
    view = stored_result(client.store, sha256, tenant)
    hand_out(
        client.store,
        tenant,
        EgressKind.READ,
        view.model_dump_json().encode("utf-8"),
        actor=actor or f"sdk:{getpass.getuser()}@{socket.gethostname()}",
        documents=[sha256],
        purpose=purpose,
    )
    return view


def stored_result(store: ObjectStore, sha256: str, tenant: str | None) -> ResultView:
    """The published text, per-page results and fields, from the store, with no egress event.

    Only for callers that record their own event for the exact bytes they then
    hand out (``custody result`` its stdout, the edge its response body).
    """
    key = ids.record_key(sha256, tenant)
    if not store.exists(key):
        raise NotFound(sha256)
    record = SignedRecord.model_validate_json(store.get(key)).record
    text = store.get(record.text_key).decode("utf-8")
    pages = [PageText.model_validate(p) for p in json.loads(store.get(record.pages_key))]
    fields: dict[str, FieldView] = {}
    if record.fields_key is not None:  # sealed beside the text, its hash in the record
        read = Extraction.model_validate_json(store.get(record.fields_key))
        fields = {name: field_view(f) for name, f in sorted(read.fields.items())}
    return ResultView(record=record, text=text, pages=pages, fields=fields)


async def list_documents(
    client: CustodyClient,
    *,
    state: str | None = None,
    tenant: str | None = None,
    limit: int = 100,
    all_tenants: bool = False,
) -> list[ListRow]:
    """Documents Temporal knows, newest first, filtered by state.

    One tenant's (``tenant=None``: documents submitted without one); every
    tenant's only with ``all_tenants``, an operator's explicit choice.
    """
    clauses = [f"WorkflowType = '{WORKFLOW_NAME}'"]
    if state:
        clauses.append(f"{SA_STATE} = '{DocState(state).value}'")
    if not all_tenants:
        clauses.append(f"{SA_TENANT} = '{ids.check_tenant(tenant) or ''}'")
    rows: list[ListRow] = []
    async for wf in client.temporal.list_workflows(" AND ".join(clauses), limit=limit):
        try:
            sha, wf_tenant = ids.parse_workflow_id(wf.id)
        except ValueError:  # a run of the type started by hand under another id: not ours
            continue
        attrs = wf.typed_search_attributes
        rows.append(
            ListRow(
                sha256=sha,
                tenant=wf_tenant,
                workflow_id=wf.id,
                source_id=attrs.get(_kw(SA_SOURCE_ID)) or None,
                state=attrs.get(_kw(SA_STATE)) or "unknown",
                code=attrs.get(_kw(SA_REASON)) or None,
                started_at=wf.start_time,
            )
        )
    # SQLite visibility cannot ORDER BY; newest first is sorted here.
    rows.sort(key=lambda r: r.started_at or _EPOCH, reverse=True)
    return rows


def _kw(name: str) -> SearchAttributeKey[str]:
    return SearchAttributeKey.for_keyword(name)


def from_store(store: ObjectStore, sha256: str, tenant: str | None) -> DocumentResult:
    """After Temporal's retention the stored records still answer."""
    record = published(store, sha256, tenant)
    if record is not None:
        return _stored(record, sha256, tenant, ids.record_key(sha256, tenant), DocState.PUBLISHED)
    outcome = latest_outcome(store, sha256, tenant)
    if outcome is None:
        raise NotFound(sha256)
    key = ids.outcome_key(sha256, tenant, outcome.run_id)
    return _stored(outcome, sha256, tenant, key, outcome.state)


def _stored(
    record: ResultRecord | OutcomeRecord,
    sha256: str,
    tenant: str | None,
    record_key: str,
    state: DocState,
) -> DocumentResult:
    """A result off a stored record: the fields the two share (attempts, transitions,
    the run; pages and text or the code), for the document asked about, at ``record_key``."""
    given = {"sha256": sha256, "tenant": tenant, "state": state, "record_key": record_key}
    return DocumentResult(**fields_among(DocumentResult, record, **given))


def published(store: ObjectStore, sha256: str, tenant: str | None) -> ResultRecord | None:
    """The published record of these bytes; it outlives Temporal's retention."""
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


def settled(store: ObjectStore, sha256: str, tenant: str | None) -> OutcomeRecord | None:
    """The quarantine or rejection that answers a resubmission of these bytes, from the
    store (it outlives Temporal's retention); None once an operator released it since."""
    outcome = latest_outcome(store, sha256, tenant)
    if outcome is None:
        return None
    folder = f"decisions/{ids.scope(tenant)}/{sha256}/"
    for key in store.list(folder):
        stamp, _, action = key[len(folder) :].removesuffix(".json").partition("-")
        at = datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
        if action == "release" and at > outcome.concluded_at:
            return None
    return outcome
