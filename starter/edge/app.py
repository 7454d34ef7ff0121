"""The authenticated HTTP intake edge (Starlette on uvicorn; ``custody serve`` runs it).

    PUT|POST /v1/documents        raw body -> 202 {sha256, state, workflow_id, deduplicated}
    POST     /v1/preview          raw body -> 200 its text now, not evidence (.preview)
    GET      /v1/documents/{sha}  state, and the result once published (caller's tenant only)
    POST     /v1/releases         {documents, recipient, policy} -> 202 a release (.releases)
    GET      /v1/releases/{id}    the release's state, and its files once delivered
    GET      /v1/reviews          the tenant's documents waiting in review (.reviews)
    GET|POST /v1/reviews/{sha}    what a reviewer needs; a reviewer's decision
    /review...                    the review page: sign-in, queue, decision (.review_page)
    GET      /metrics             Prometheus text; a key with the ``admin`` scope (bearer)
    GET      /openapi.json        public

Each route needs its scope on the caller's key (starter.edge.scopes): ``upload``
for intake and preview, ``read`` for documents, ``release`` for releases,
``review`` for reviews, ``admin`` for ``/metrics``; anything else is 403
``SCOPE_DENIED``. ``/metrics`` takes a tenant's key, not a token of its own: its
labels are codes only, its values deployment-wide counts a tenant already feels
as 429s, and a scraper needs no second secret (give it a revocable key with
``admin`` only). It reads Temporal visibility at most once per
``CUSTODY_ADMISSION_REFRESH_S``. ``/openapi.json`` stays public: one hand-written
document for all, with no tenant data or secret.

Every refusal is ``{"error": CODE, "message": ...}`` with a stable code. A
refused upload never starts a workflow, and its staged file is deleted on
every path. Documents are looked up by tenant-scoped IDs only, so another
tenant's document is a 404 exactly like a missing one.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.service import RPCError, RPCStatusCode

from activities.scratch import StagingArea
from custody import ids
from custody.egress import EgressKind
from custody.errors import AdmissionReason, AdmissionRejected, Code, CustodyError, NotFound
from custody.state.egress import hand_out
from custody.stores import StoreUnavailable
from starter.client.connect import CustodyClient
from starter.client.documents import Hashed
from starter.client.submit import submit
from starter.edge import manual, metrics, tenants
from starter.edge import read as edge_read
from starter.edge.inflight import InFlight
from starter.edge.openapi import document
from starter.edge.preview import Preview
from starter.edge.releases import Releases
from starter.edge.review_page import ReviewPage
from starter.edge.reviews import Reviews
from starter.edge.scopes import Scope, refusal
from starter.edge.slo import SloTracker
from starter.edge.upload import (
    Idempotency,
    Pace,
    Staged,
    UploadError,
    UploadOptions,
    known_document_type,
    paced,
    read_options,
    stage_body,
)

STORE_RETRY_S = 5.0
_TRACER = trace.get_tracer("custody.edge")


def error(status: int, code: Code, message: str, retry_after: float | None = None) -> JSONResponse:
    headers = {"Retry-After": str(math.ceil(retry_after))} if retry_after is not None else None
    return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers)


class Edge:
    """The routes, bound to one Custody client (and so to its admission controller)."""

    def __init__(self, client: CustodyClient, area: StagingArea) -> None:
        self.client, self.area = client, area
        self.admission = client.admission  # what submit asks; the edge only peeks and reports
        self.idempotency = Idempotency(client.store)
        self.slo = SloTracker(client)
        # The contract states this deployment's own limits, built once.
        self.spec = document(client.settings.limits)
        s = client.settings
        self.inflight = InFlight(
            s.edge_max_inflight_per_tenant, s.edge_max_inflight_bytes_per_tenant
        )
        self.pace = Pace(s.edge_min_body_bytes, s.edge_body_window_s)
        self.lane = manual.Lane(
            client.store, s.admission_manual_max_per_tenant, s.admission_manual_max_bytes_per_tenant
        )

    def _tenant(self, request: Request, scope: Scope) -> tenants.Tenant:
        """The key's tenant, if the key may use a route needing ``scope`` (else 401/403)."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise UploadError(401, Code.UNAUTHENTICATED, "Authorization: Bearer <api key> required")
        try:
            tenant = tenants.authenticate(self.client.store, token.strip())
        except tenants.AuthError as err:
            if err.revoked:
                raise UploadError(403, Code.KEY_REVOKED, "this API key was revoked") from None
            raise UploadError(401, Code.UNAUTHENTICATED, "invalid API key") from None
        production = self.client.settings.env == "production"
        why = refusal(tenant.scopes, scope, production=production)
        if why is not None:
            raise UploadError(403, Code.SCOPE_DENIED, why)
        return tenant

    def caller(self, scope: Scope) -> Callable[[Request], tenants.Tenant]:
        """Authentication for the routes of one scope, for the route classes beside this one."""
        return lambda request: self._tenant(request, scope)

    def routes(self) -> list[Route]:
        """Documents in and out, and the edge's own description and metrics."""
        return [
            Route("/v1/documents", self.upload, methods=["PUT", "POST"]),
            Route("/v1/documents/{sha256}", self.document, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/metrics", self.metrics, methods=["GET"]),
        ]

    async def upload(self, request: Request) -> Response:
        started = time.perf_counter()
        # The trace's root when tracing is on (a no-op span when it is off):
        # the SDK's interceptor hangs StartWorkflow and all that follows below it.
        with _TRACER.start_as_current_span("custody.upload", kind=SpanKind.SERVER) as span:
            response = await self._upload(request)
            span.set_attribute("http.status_code", response.status_code)
        metrics.UPLOAD_SECONDS.labels(str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response

    async def _upload(self, request: Request) -> Response:
        try:
            tenant = self._tenant(request, Scope.UPLOAD)
            opts = read_options(request.headers, self.client.settings)
        except UploadError as err:
            return error(err.status, err.code, err.message)
        staged = None
        try:
            store, name = self.client.store, opts.document_type
            await asyncio.to_thread(known_document_type, store, tenant.name, name)
            await self._precheck(tenant, opts)
            with self.inflight.opened(tenant.name, opts.length) as ticket:
                staged = await stage_body(
                    paced(request.stream(), self.pace),
                    self.area,
                    declared=opts.length,
                    max_bytes=self.client.settings.limits.max_bytes,
                    ticket=ticket,
                )
            if staged.size == 0:
                raise UploadError(400, Code.EMPTY, "empty body")
            if staged.media_type != opts.media_type:
                raise UploadError(415, Code.UNSUPPORTED_TYPE, "content does not match Content-Type")
            return await self._accept(tenant, opts, staged)
        except UploadError as err:
            return error(err.status, err.code, err.message, err.retry_after)
        except AdmissionRejected as err:
            return await self._refused(err, staged, tenant, opts)
        except CustodyError as err:
            status = 413 if err.code is Code.TOO_LARGE else 400
            return error(status, err.code, err.detail)
        finally:
            if staged is not None:
                staged.path.unlink(missing_ok=True)

    async def _refused(
        self,
        err: AdmissionRejected,
        staged: Staged | None,
        tenant: tenants.Tenant,
        opts: UploadOptions,
    ) -> Response:
        """Past an admission bound: the manual lane when it takes this reason and has room."""
        if staged is not None and self._to_manual_lane(err):
            try:
                await self.lane.park(staged, tenant.name, opts, err.reason)
            except UploadError as full:
                return error(full.status, full.code, full.message, full.retry_after)
            metrics.MANUAL_LANE.labels(err.reason).inc()
            return _accepted(manual.answer(staged.sha256))
        status = 503 if err.reason is AdmissionReason.PAUSED else 429
        return error(status, err.code, err.detail, err.retry_after)

    async def _precheck(self, tenant: tenants.Tenant, opts: UploadOptions) -> None:
        # Refuse before reading the body when the answer is already "no": a client
        # under backpressure should not have to upload to learn it. A peek: it takes
        # nothing, and submit's admission decides once the body is here.
        try:
            await self.admission.precheck(
                opts.length or 0,
                tenant.name,
                opts.source_id,
                priority=opts.priority and tenant.priority,
            )
        except AdmissionRejected as err:
            if not self._to_manual_lane(err):  # else the body is parked once read
                raise

    def _to_manual_lane(self, err: AdmissionRejected) -> bool:
        return self.client.settings.admission_manual_lane and err.reason in manual.LANE_REASONS

    async def _accept(
        self, tenant: tenants.Tenant, opts: UploadOptions, staged: Staged
    ) -> Response:
        key = opts.idempotency_key
        if key is not None:
            seen = await asyncio.to_thread(self.idempotency.get, tenant.name, key)
            if seen is not None and seen["body_sha256"] != staged.sha256:
                raise UploadError(
                    422, Code.IDEMPOTENCY_KEY_REUSED, "this key was used with another body"
                )
            if seen is not None:
                return _accepted(seen["answer"])
        # Admission is asked once, inside submit; a refusal comes back AdmissionRejected.
        sub = await submit(
            self.client,
            Hashed(staged.path, staged.sha256, staged.size),  # hashed as it streamed in
            source_id=opts.source_id,
            tenant=tenant.name,
            priority=opts.priority and tenant.priority,
            document_type=opts.document_type,
        )
        answer = {
            "sha256": sub.sha256,
            "state": sub.state.value,
            "workflow_id": sub.workflow_id,
            "deduplicated": sub.deduplicated,
        }
        metrics.UPLOAD_BYTES.inc(sub.size_bytes)
        if key is not None:
            await asyncio.to_thread(
                self.idempotency.remember, tenant.name, key, staged.sha256, answer
            )
        return _accepted(answer)

    async def document(self, request: Request) -> Response:
        try:
            tenant = self._tenant(request, Scope.READ)
        except UploadError as err:
            return error(err.status, err.code, err.message)
        sha = request.path_params["sha256"]
        try:
            purpose = edge_read.purpose(request.query_params.get("purpose"))
        except ValueError as err:
            return error(400, Code.BAD_REQUEST, f"purpose: {err}")
        try:
            ids.check_sha256(sha)
            body = await edge_read.document_view(self.client, sha, tenant.name)
        except CustodyError:
            return error(400, Code.BAD_SHA256, "not a lower-case hex SHA-256")
        except NotFound:
            return error(404, Code.NOT_FOUND, "no such document")
        data = bytes(JSONResponse(body).body)
        if body.get("result") is not None:  # content leaves: the egress event comes first
            await asyncio.to_thread(
                hand_out,
                self.client.store,
                tenant.name,
                EgressKind.READ,
                data,
                actor=tenant.key_id,
                documents=[sha],
                purpose=purpose,
            )
        return Response(data, media_type="application/json")

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(self.spec)

    async def metrics(self, request: Request) -> Response:
        try:
            self._tenant(request, Scope.ADMIN)
        except UploadError as err:
            return error(err.status, err.code, err.message)
        await self.admission.refresh()
        await self.slo.refresh()
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)


async def _store_unavailable(request: Request, exc: Exception) -> Response:
    # The store is down (tenants, staging, idempotency all live there): a coded
    # 503 the client retries, not a bare 500. No detail: it is the backend's.
    return error(503, Code.STORE_UNAVAILABLE, "storage is unavailable; retry later", STORE_RETRY_S)


#: Temporal's answers that mean "not now" (the server busy, restarting, or slower than
#: the call's deadline), not a bug: a coded 503 the client retries.
_TRANSIENT_RPC = frozenset(
    {RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.RESOURCE_EXHAUSTED}
)


async def _temporal_unavailable(request: Request, exc: Exception) -> Response:
    # Any other RPC status is re-raised: a 500 there is a bug, and should look like one.
    if not isinstance(exc, RPCError) or exc.status not in _TRANSIENT_RPC:
        raise exc
    message = "the workflow service is unavailable; retry later"
    return error(503, Code.UNREACHABLE, message, STORE_RETRY_S)


def _accepted(answer: dict[str, Any]) -> JSONResponse:
    location = f"/v1/documents/{answer['sha256']}"
    return JSONResponse(answer, status_code=202, headers={"Location": location})


def create_app(client: CustodyClient, area: StagingArea | None = None) -> Starlette:
    """The edge; ``area`` is the process's staging area (``custody serve`` sweeps it).

    Admission is the client's (``client.admission``): the edge and every other
    submission through that client share its bounds, rates and reservations.
    """
    area = area or StagingArea(client.settings.staging_path)
    edge = Edge(client, area)
    releases = Releases(client, edge.caller(Scope.RELEASE), error)
    preview = Preview(client, area, edge.caller(Scope.UPLOAD), error, edge.inflight)
    reviews = Reviews(client, edge.caller(Scope.REVIEW), error)
    page = ReviewPage(client)
    app = Starlette(
        exception_handlers={
            StoreUnavailable: _store_unavailable,
            RPCError: _temporal_unavailable,
        },
        # Each resource names its own routes; no two of them share a path.
        routes=[
            *edge.routes(),
            *preview.routes(),
            *releases.routes(),
            *reviews.routes(),
            *page.routes(),
        ],
    )
    app.state.edge = edge  # for embedders (the bench) that read its trackers
    app.state.preview = preview
    return app
