"""``custody serve``: the authenticated HTTP intake edge (Starlette on uvicorn).

    PUT|POST /v1/documents        raw body -> 202 {sha256, state, workflow_id, deduplicated}
    GET      /v1/documents/{sha}  state, and the result once published (caller's tenant only)
    GET      /openapi.json, /metrics

Every refusal is ``{"error": CODE, "message": ...}`` with a stable code. A
refused upload never starts a workflow, and its staged file is deleted on
every path. Documents are looked up by tenant-scoped IDs only, so another
tenant's document is a 404 exactly like a missing one.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.client import WorkflowExecutionStatus
from temporalio.common import SearchAttributeKey
from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.errors import AdmissionRejected, CustodyError
from custody.models import DocState
from custody.queues import SA_STATE
from custody.settings import Settings
from starter import metrics, queries, tenants
from starter.admission import Admission
from starter.api import CustodyClient, NotFound, _handle, submit
from starter.intake import Idempotency, UploadError, private_dir, read_options, stage_body
from starter.openapi import SPEC


def error(status: int, code: str, message: str, retry_after: float | None = None) -> JSONResponse:
    headers = {"Retry-After": str(math.ceil(retry_after))} if retry_after is not None else None
    return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers)


class Edge:
    """The routes, bound to one Custody client and one admission controller."""

    def __init__(self, client: CustodyClient, admission: Admission) -> None:
        self.client, self.admission = client, admission
        self.idempotency = Idempotency(client.store)
        self.folder = private_dir(client.settings.staging_path)

    def _tenant(self, request: Request) -> tenants.Tenant:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise UploadError(401, "UNAUTHENTICATED", "Authorization: Bearer <api key> required")
        try:
            return tenants.authenticate(self.client.store, token.strip())
        except tenants.AuthError as err:
            if err.revoked:
                raise UploadError(403, "KEY_REVOKED", "this API key was revoked") from None
            raise UploadError(401, "UNAUTHENTICATED", "invalid API key") from None

    async def upload(self, request: Request) -> Response:
        started = time.perf_counter()
        response = await self._upload(request)
        metrics.UPLOAD_SECONDS.labels(str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response

    async def _upload(self, request: Request) -> Response:
        try:
            tenant = self._tenant(request)
            opts = read_options(request.headers, self.client.settings)
        except UploadError as err:
            return error(err.status, err.code, err.message)
        staged = None
        try:
            # Refuse before reading the body when the answer is already "no":
            # a client under backpressure should not have to upload to learn it.
            await self.admission.precheck(
                opts["length"] or 0,
                opts["source_id"] or tenant.name,
                priority=opts["priority"] and tenant.priority,
            )
            staged = await stage_body(
                request.stream(),
                self.folder,
                declared=opts["length"],
                max_bytes=self.client.settings.limits.max_bytes,
            )
            if staged.size == 0:
                raise UploadError(400, "EMPTY", "empty body")
            if staged.media_type != opts["media_type"]:
                raise UploadError(415, "UNSUPPORTED_TYPE", "content does not match Content-Type")
            return await self._accept(tenant, opts, staged.path, staged.sha256)
        except UploadError as err:
            return error(err.status, err.code, err.message)
        except AdmissionRejected as err:
            status = 503 if err.reason == "paused" else 429
            return error(status, f"ADMISSION_{err.reason.upper()}", err.detail, err.retry_after)
        except CustodyError as err:
            status = 413 if err.code == "TOO_LARGE" else 400
            return error(status, str(err.code), err.detail)
        finally:
            if staged is not None:
                staged.path.unlink(missing_ok=True)

    async def _accept(
        self, tenant: tenants.Tenant, opts: dict[str, Any], path: Any, sha: str
    ) -> Response:
        key = opts["idempotency_key"]
        if key is not None:
            seen = await asyncio.to_thread(self.idempotency.get, tenant.name, key)
            if seen is not None and seen["body_sha256"] != sha:
                raise UploadError(
                    422, "IDEMPOTENCY_KEY_REUSED", "this key was used with another body"
                )
            if seen is not None:
                return _accepted(seen["answer"])
        sub = await submit(
            self.client,
            path,
            source_id=opts["source_id"],
            tenant=tenant.name,
            admission=self.admission,
            priority=opts["priority"] and tenant.priority,
        )
        answer = {
            "sha256": sub.sha256,
            "state": sub.state.value,
            "workflow_id": sub.workflow_id,
            "deduplicated": sub.deduplicated,
        }
        metrics.UPLOAD_BYTES.inc(sub.size_bytes)
        if key is not None:
            await asyncio.to_thread(self.idempotency.remember, tenant.name, key, sha, answer)
        return _accepted(answer)

    async def document(self, request: Request) -> Response:
        try:
            tenant = self._tenant(request)
        except UploadError as err:
            return error(err.status, err.code, err.message)
        sha = request.path_params["sha256"]
        try:
            ids.check_sha256(sha)
            body = await self._state(sha, tenant.name)
        except CustodyError:
            return error(400, "BAD_SHA256", "not a lower-case hex SHA-256")
        except NotFound:
            return error(404, "NOT_FOUND", "no such document")
        if body["state"] == DocState.PUBLISHED:
            res = await asyncio.to_thread(queries.result, self.client, sha, tenant.name)
            body["result"] = {
                "text": res.text,
                "mean_confidence": res.record.mean_confidence,
                "pages": [
                    {"page": p.page, "mean_confidence": p.mean_confidence} for p in res.pages
                ],
            }
        return JSONResponse(body)

    async def _state(self, sha: str, tenant: str) -> dict[str, Any]:
        """A running document's state from its search attribute, others via ``queries``.

        The search attribute answers even when no worker is polling (a query
        would wait for one), so a backlog never slows this endpoint down.
        """
        try:
            desc = await _handle(self.client, sha, tenant).describe()
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            desc = None
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
        view = await queries.status(self.client, sha, tenant)
        return {
            "sha256": sha,
            "state": view.state.value,
            "code": view.code,
            "pages": view.pages,
            "running": view.running,
            "result": None,
        }

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(SPEC)

    async def metrics(self, request: Request) -> Response:
        await self.admission.refresh()
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)


def _accepted(answer: dict[str, Any]) -> JSONResponse:
    location = f"/v1/documents/{answer['sha256']}"
    return JSONResponse(answer, status_code=202, headers={"Location": location})


def create_app(client: CustodyClient, admission: Admission | None = None) -> Starlette:
    edge = Edge(client, admission or Admission(client))
    return Starlette(
        routes=[
            Route("/v1/documents", edge.upload, methods=["PUT", "POST"]),
            Route("/v1/documents/{sha256}", edge.document, methods=["GET"]),
            Route("/openapi.json", edge.openapi, methods=["GET"]),
            Route("/metrics", edge.metrics, methods=["GET"]),
        ]
    )


# ---- CLI: custody serve -------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="run the HTTP intake edge")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    async def go() -> None:
        client = await CustodyClient.connect(settings)
        config = uvicorn.Config(
            create_app(client), host=args.host, port=args.port, log_level="warning"
        )
        await uvicorn.Server(config).serve()

    asyncio.run(go())
    return 0
