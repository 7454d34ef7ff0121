"""The edge's releases: ``POST /v1/releases`` and ``GET /v1/releases/{release_id}``.

    POST {"documents": [sha256, ...], "recipient": NAME, "policy": "default",
          "purpose": TEXT (optional: the purpose of disclosure; default the policy's)}
        -> 202 {release_id, state: "running", code, recipient, policy, policy_sha256,
                documents, files: []}   (Location: /v1/releases/{release_id})
    GET  -> 200 the same object; once it ended, ``delivered``, ``refused`` or
            ``failed`` with its ``code`` and the files that left

The tenant is the API key's; the actor recorded in the egress event is the
key's id, never the key. The same request again joins the same release (its
id derives from tenant, recipient, policy hash and documents), so a client
may retry a POST freely. Another tenant's release is a 404 like a missing one.
A POST passes the release gate first (``starter.edge.release_gate``: a bounded
body, each tenant's rate and running releases).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import SearchAttributeKey

from custody import egress as eg
from custody.errors import Code, CustodyError, UploadError
from custody.queues import SA_TENANT
from custody.state.egress import SignedReceipt, pinned_policy
from custody.stores import ObjectMissing
from starter.client.connect import CustodyClient, described
from starter.client.release import release
from starter.edge import tenants
from starter.edge.release_gate import ReleaseGate

MAX_DOCUMENTS = 100
_NOT_FOUND = {Code.RECIPIENT_UNKNOWN, Code.POLICY_UNKNOWN}
Authenticate = Callable[[Request], tenants.Tenant]
Refusal = Callable[..., JSONResponse]  # (status, code, message[, retry_after])


class Releases:
    """The two routes, given the edge's client, authentication and error answer."""

    def __init__(self, client: CustodyClient, authenticate: Authenticate, error: Refusal) -> None:
        self.client, self._authenticate, self._error = client, authenticate, error
        self.gate = ReleaseGate(client)

    def routes(self) -> list[Route]:
        return [
            Route("/v1/releases", self.start, methods=["POST"]),
            Route("/v1/releases/{release_id}", self.get, methods=["GET"]),
        ]

    async def start(self, request: Request) -> Response:
        try:
            tenant = self._authenticate(request)
            body = await self.gate.body(request)
            docs, recipient, policy = _body(body)
            purpose = _purpose(body)
            await self.gate.admit(tenant.name)
            started = await release(
                self.client,
                docs,
                to=recipient,
                policy=policy,
                tenant=tenant.name,
                actor=tenant.key_id,
                purpose=purpose,
            )
            self.gate.started(tenant.name)
        except UploadError as err:
            return self._error(err.status, err.code, err.message, err.retry_after)
        except CustodyError as err:
            if err.code is Code.CORRUPT:  # ids.check_sha256 on a document
                return self._error(400, Code.BAD_SHA256, err.detail)
            status = 404 if err.code in _NOT_FOUND else 422
            return self._error(status, err.code, err.detail)
        location = f"/v1/releases/{started.release_id}"
        return JSONResponse(started.summary(), status_code=202, headers={"Location": location})

    async def get(self, request: Request) -> Response:
        try:
            tenant = self._authenticate(request)
            rid = eg.check_release_id(request.path_params["release_id"])
        except UploadError as err:
            return self._error(err.status, err.code, err.message)
        except ValueError:
            return self._error(
                400, Code.BAD_REQUEST, "a release id is 32 lower-case hex characters"
            )
        body = await self._view(rid, tenant.name)
        if body is None:
            return self._error(404, Code.NOT_FOUND, "no such release")
        return JSONResponse(body)

    async def _view(self, rid: str, tenant: str) -> dict[str, Any] | None:
        handle = self.client.temporal.get_workflow_handle(
            eg.release_workflow_id(rid), result_type=eg.ReleaseResult
        )
        desc = await described(handle)
        if desc is None:
            return await asyncio.to_thread(self._from_receipt, rid, tenant)
        attrs = desc.typed_search_attributes
        if attrs.get(SearchAttributeKey.for_keyword(SA_TENANT)) != tenant:
            return None  # another tenant's release: the same answer as a missing one
        if desc.status == WorkflowExecutionStatus.COMPLETED:
            done: eg.ReleaseResult = await handle.result()
            return done.summary()
        inp = await self._input(handle)
        if inp is None:
            return None
        result = _running(inp)
        result.policy = await asyncio.to_thread(self._policy_name, inp)
        if desc.status != WorkflowExecutionStatus.RUNNING:
            # Terminated, cancelled or timed out by an operator: it ended without an answer.
            result = result.model_copy(
                update={"state": eg.ReleaseState.FAILED, "code": Code.INTERNAL}
            )
        return result.summary()

    def _policy_name(self, inp: eg.ReleaseInput) -> str | None:
        try:
            return pinned_policy(self.client.store, inp.tenant, inp.policy_sha256).name
        except CustodyError:
            return None

    async def _input(self, handle: WorkflowHandle[Any, Any]) -> eg.ReleaseInput | None:
        """The release's input, from the first event of its history, decoded as a worker would."""
        async for event in handle.fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            converter = self.client.temporal.data_converter
            decoded = await converter.decode(payloads, [eg.ReleaseInput])
            return decoded[0] if decoded and isinstance(decoded[0], eg.ReleaseInput) else None
        return None

    def _from_receipt(self, rid: str, tenant: str) -> dict[str, Any] | None:
        """After Temporal's retention: a delivered release still answers from its receipt."""
        try:
            signed = SignedReceipt.model_validate_json(
                self.client.store.get(eg.receipt_key(tenant, rid))
            )
        except (ObjectMissing, KeyError):
            return None
        r = signed.receipt
        if r.release_id != rid or r.tenant != tenant:
            return None  # a receipt stored under another release's key is not this one's
        return eg.ReleaseResult.summary(
            eg.ReleaseResult(
                release_id=rid,
                state=eg.ReleaseState.DELIVERED,
                tenant=tenant,
                recipient=r.recipient,
                policy=r.policy,
                policy_sha256=r.policy_sha256,
                files=r.files,
                documents=r.sources,
                workflow_id=r.workflow_id,
            )
        )


def _running(inp: eg.ReleaseInput) -> eg.ReleaseResult:
    return eg.ReleaseResult(
        release_id=inp.release_id,
        state=eg.ReleaseState.RUNNING,
        tenant=inp.tenant,
        recipient=inp.recipient,
        policy_sha256=inp.policy_sha256,
        documents=sorted(inp.documents),
        workflow_id=eg.release_workflow_id(inp.release_id),
    )


def _purpose(body: Any) -> str | None:
    """The request's purpose of disclosure, one printable line; None: the policy's."""
    purpose = body.get("purpose") if isinstance(body, dict) else None
    if purpose is None:
        return None
    try:
        return eg.check_purpose(purpose) if isinstance(purpose, str) else eg.check_purpose("")
    except ValueError as err:
        raise UploadError(400, Code.BAD_REQUEST, f"purpose: {err}") from None


def _body(body: Any) -> tuple[list[str], str, str]:
    if not isinstance(body, dict):
        raise UploadError(400, Code.BAD_REQUEST, "the body must be a JSON object")
    docs, recipient = body.get("documents"), body.get("recipient")
    policy = body.get("policy", "default")
    if not isinstance(docs, list) or not docs or not all(isinstance(d, str) for d in docs):
        raise UploadError(400, Code.BAD_REQUEST, "documents: a non-empty list of SHA-256 strings")
    if len(docs) > MAX_DOCUMENTS:
        raise UploadError(400, Code.BAD_REQUEST, f"documents: at most {MAX_DOCUMENTS} per release")
    if not isinstance(recipient, str) or not isinstance(policy, str):
        raise UploadError(400, Code.BAD_REQUEST, "recipient and policy are names")
    try:
        eg.check_name(recipient, "recipient")
        eg.check_name(policy, "policy")
    except ValueError as err:
        raise UploadError(400, Code.BAD_REQUEST, str(err)) from None
    return docs, recipient, policy
