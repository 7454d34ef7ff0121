"""The edge's read side: ``GET /v1/documents/{sha256}`` for the caller's tenant only.

Documents are looked up by tenant-scoped workflow IDs and store keys only, so
another tenant's document is a :class:`NotFound` exactly like a missing one.
The query parameter ``purpose`` is the read's purpose of disclosure (else the
tenant policy's): printable ASCII, as the OpenAPI document states it
(``starter.edge.read_spec.PURPOSE``), so a schema-valid request is never refused for it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from temporalio.client import WorkflowExecutionStatus
from temporalio.common import SearchAttributeKey

from custody.egress import check_purpose
from custody.errors import NotFound
from custody.models import DocState
from custody.queues import SA_STATE
from custody.stores import ObjectMissing
from starter.client import read as queries
from starter.client.connect import CustodyClient, described
from starter.edge import manual
from starter.edge.read_spec import PURPOSE

_PURPOSE = re.compile(PURPOSE.removesuffix("$"))  # fullmatch: no newline past a $


def purpose(value: str | None) -> str | None:
    """The request's purpose of disclosure, or None; ValueError when it is not one."""
    if value is None:
        return None
    if len(value) > 200 or not _PURPOSE.fullmatch(value):
        raise ValueError("1-200 printable ASCII characters, not only spaces")
    return check_purpose(value)


async def document_view(client: CustodyClient, sha: str, tenant: str) -> dict[str, Any]:
    """State, code, pages, and the published result (text and fields) once there is one."""
    try:
        body = await _state(client, sha, tenant)
    except NotFound:
        return await _parked(client, sha, tenant)
    if body["state"] == DocState.PUBLISHED:
        # No event here: the edge records one for the exact body it sends (app.Edge.document).
        res = await asyncio.to_thread(queries.stored_result, client.store, sha, tenant)
        body["result"] = {
            "text": res.text,
            "mean_confidence": res.record.mean_confidence,
            "pages": [{"page": p.page, "mean_confidence": p.mean_confidence} for p in res.pages],
            # Beside the text, in the same body: the one read event hashes both.
            "fields": {name: f.model_dump(mode="json") for name, f in res.fields.items()},
        }
    return body


async def _parked(client: CustodyClient, sha: str, tenant: str) -> dict[str, Any]:
    """A document in the manual lane has no workflow yet; say so rather than 404."""
    try:
        await asyncio.to_thread(manual.note, client.store, sha, tenant)
    except ObjectMissing:
        raise NotFound(sha) from None
    return {
        "sha256": sha,
        "state": "manual",
        "code": None,
        "pages": 0,
        "running": False,
        "result": None,
    }


async def _state(client: CustodyClient, sha: str, tenant: str) -> dict[str, Any]:
    """A running document's state from its search attribute, others via ``queries``.

    The search attribute answers even when no worker is polling (a query
    would wait for one), so a backlog never slows this endpoint down.
    """
    desc = await described(client.handle(sha, tenant))
    if desc is not None and desc.status == WorkflowExecutionStatus.RUNNING:
        state = desc.typed_search_attributes.get(SearchAttributeKey.for_keyword(SA_STATE))
        return {
            "sha256": sha,
            "state": state or "accepted",
            "code": None,
            "pages": 0,
            "running": True,
            "result": None,
        }
    view = await queries.status(client, sha, tenant)
    return {
        "sha256": sha,
        "state": view.state.value,
        "code": view.code,
        "pages": view.pages,
        "running": view.running,
        "result": None,
    }
