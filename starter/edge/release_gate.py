"""Admission for ``POST /v1/releases``, as uploads have theirs: a bounded body, a rate and
a bound on what runs, per tenant.

A release renders every page of its documents on the shared I/O queue, so
without these one tenant could fill that queue for everyone:

* the body is read up to ``CUSTODY_EDGE_RELEASE_BODY_BYTES`` (64 KiB; a
  hundred documents take under 8), 413 ``TOO_LARGE`` past it; JSON nested
  deeper than Python's parser goes is 400 ``BAD_REQUEST``, not a 500;
* each tenant's releases are rate-limited (``CUSTODY_EDGE_RELEASE_RATE`` per
  second, ``CUSTODY_EDGE_RELEASE_BURST`` at once): 429 ``ADMISSION_TENANT_RATE``;
* each tenant may have ``CUSTODY_EDGE_MAX_RUNNING_RELEASES_PER_TENANT`` releases
  running (Temporal visibility, plus those this edge started since it last
  looked): 429 ``INFLIGHT_RELEASES``. A retried request for a release already
  running is refused the same way; its answer comes once the bound frees.

Inside the workflow each step also carries the tenant as its fairness key
(``workflows.release``), so admitted releases share the queue fairly too.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request

from custody.egress import RELEASE_WORKFLOW_NAME
from custody.errors import Code, UploadError
from custody.queues import SA_TENANT
from custody.settings import Settings
from starter.client.connect import CustodyClient
from starter.edge.upload import json_body

#: A refused client waits about as long as a release takes to render a page or two.
RETRY_S = 5.0


class ReleaseGate:
    """One per edge process: the body cap, each tenant's bucket and its running releases."""

    def __init__(self, client: CustodyClient) -> None:
        s: Settings = client.settings
        self._client, self._s = client, s
        self._tokens: dict[str, tuple[float, float]] = {}  # tenant -> (tokens, at)
        self._started: dict[str, list[float]] = {}  # tenant -> this edge's recent starts

    async def body(self, request: Request) -> Any:
        """The request's JSON, read to the cap; 413 past it, 400 if it is not JSON."""
        return await json_body(request, self._s.edge_release_body_bytes, "a release request")

    async def admit(self, tenant: str) -> None:
        """Take one of the tenant's tokens and a place among its running releases, or 429."""
        tokens = self._refill(tenant)
        if tokens < 1:
            wait = (1 - tokens) / self._s.edge_release_rate
            raise UploadError(
                429, Code.ADMISSION_TENANT_RATE, "releases arrive too fast", max(1.0, wait)
            )
        bound = self._s.edge_max_running_releases_per_tenant
        if await self._running(tenant) >= bound:
            raise UploadError(429, Code.INFLIGHT_RELEASES, f"{bound} releases running", RETRY_S)
        self._tokens[tenant] = (tokens - 1, time.monotonic())

    def started(self, tenant: str) -> None:
        """Count a release this edge started until visibility shows it (a few seconds)."""
        self._started.setdefault(tenant, []).append(time.monotonic())

    def _refill(self, tenant: str) -> float:
        now = time.monotonic()
        burst = float(self._s.edge_release_burst)
        tokens, at = self._tokens.get(tenant, (burst, now))
        return min(burst, tokens + (now - at) * self._s.edge_release_rate)

    async def _running(self, tenant: str) -> int:
        query = (
            f"WorkflowType = '{RELEASE_WORKFLOW_NAME}' AND ExecutionStatus = 'Running' "
            f"AND TaskQueue = '{self._s.io_task_queue}' AND {SA_TENANT} = '{tenant}'"
        )
        counted = (await self._client.temporal.count_workflows(query)).count
        recent = [t for t in self._started.get(tenant, []) if time.monotonic() - t < _LAG_S]
        self._started[tenant] = recent
        return max(counted, len(recent))


#: How long a start may take to show in visibility (the dev server's lags about a second).
_LAG_S = 5.0
