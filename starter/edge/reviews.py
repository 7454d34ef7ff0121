"""The edge's reviews: the tenant's queue, what a reviewer needs, and the decision.

    GET  /v1/reviews           -> 200 [{sha256, tenant, reasons, fields_needing_review,
                                        waiting_since}]
    GET  /v1/reviews/{sha256}  -> 200 fields (values, boxes) and pages (lines, PNG images)
    POST /v1/reviews/{sha256}  {verdict, reject_code, fields, lines, note}
                               -> 200 {state, reviewed_by}

All three need the ``review`` scope on the tenant's API key (403 ``SCOPE_DENIED``).
A document not waiting in review is 404 ``NOT_IN_REVIEW`` (another tenant's
too); one whose review was decided is 409 ``ALREADY_DECIDED``.

**Who decides.** An API key names a tenant, not a person, and a decision must
be signed by the reviewer's own Ed25519 key (``custody.operators``): the
registry holds only public keys, so nothing the edge owns can sign as a
person. The caller therefore presents the reviewer's credential (the key
file ``custody operators add`` printed, base64, in ``Custody-Reviewer-Credential``)
with the decision; the edge checks it against the registry (known, not
revoked or expired, role ``reviewer``), signs this one decision with it in
memory and keeps nothing. A key bound to a reviewer would let whoever holds
the tenant's key decide as that person, and a free-text name is what #31
removes. On a GET the credential is optional: given, the egress event names
the reviewer; else the key's id, as every read does.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from custody import ids
from custody.errors import Code, CustodyError, IdentityRefused, ReviewRefused, UploadError
from custody.operators import Acting, DecisionKind, check_acting, parse_credential
from custody.reviews import Answer
from custody.stores import ObjectStore
from starter.client import review
from starter.client.connect import CustodyClient
from starter.edge import tenants
from starter.edge.read import purpose as read_purpose
from starter.edge.review_body import MAX_BODY_BYTES, STATUS, Verdict, verdict
from starter.edge.upload import json_body

CREDENTIAL_HEADER = "Custody-Reviewer-Credential"
NO_STORE = {"Cache-Control": "no-store"}
Authenticate = Callable[[Request], tenants.Tenant]
Refusal = Callable[..., JSONResponse]  # (status, code, message[, retry_after])


def reviewer(store: ObjectStore, presented: bytes) -> Acting:
    """The identity whose key file ``presented`` holds, if it may decide a review now."""
    return check_acting(store, parse_credential(presented), DecisionKind.REVIEW)


async def apply(
    client: CustodyClient, person: Acting, sha256: str, tenant: str, chosen: Verdict
) -> Answer:
    """``chosen``, signed by ``person``, delivered to the document's review (or refused)."""
    await review.status(client, sha256, tenant)  # 404 / 409 before anything is sealed
    why = chosen.semantic_refusal()
    if why is not None:
        raise ReviewRefused(Code.DECISION_INVALID, why)
    signed, corrections = review.decision(
        person, sha256, tenant, reject=chosen.reject_code, fields=chosen.fields,
        lines=chosen.lines, note=chosen.note,
    )  # fmt: skip
    return await review.resolve(client, signed, corrections)


def refused(err: CustodyError) -> tuple[int, str]:
    """A decision's refusal as an HTTP status and its code (any other identity's: 403)."""
    return STATUS.get(err.code, 403 if isinstance(err, IdentityRefused) else 422), err.code


class Reviews:
    """The three routes, given the edge's client, authentication and error answer."""

    def __init__(self, client: CustodyClient, authenticate: Authenticate, error: Refusal) -> None:
        self.client, self._authenticate, self._error = client, authenticate, error

    def routes(self) -> list[Route]:
        return [
            Route("/v1/reviews", self.queue, methods=["GET"]),
            Route("/v1/reviews/{sha256}", self.one, methods=["GET", "POST"]),
        ]

    async def queue(self, request: Request) -> Response:
        try:
            tenant = self._authenticate(request)
        except UploadError as err:
            return self._error(err.status, err.code, err.message)
        rows = [
            {
                "sha256": w.sha256,
                "tenant": w.tenant,
                "reasons": w.reasons,
                "fields_needing_review": w.fields_needing_review,
                "waiting_since": w.waiting_since.isoformat(),
            }
            for w in await review.waiting(self.client, tenant.name)
        ]
        return JSONResponse(rows, headers=NO_STORE)

    async def one(self, request: Request) -> Response:
        """One route for both methods, so a 405's ``Allow`` names GET and POST."""
        return await (self.decide if request.method == "POST" else self.show)(request)

    async def show(self, request: Request) -> Response:
        try:
            tenant, sha = self._authenticate(request), _sha(request)
            purpose = _purpose(request)
            actor = tenant.key_id
            if CREDENTIAL_HEADER.lower() in request.headers:
                actor = self._reviewer(request).name
            data = await review.show(self.client, sha, tenant.name, actor=actor, purpose=purpose)
        except UploadError as err:
            return self._error(err.status, err.code, err.message)
        except (ReviewRefused, IdentityRefused) as err:
            return self._error(*refused(err), err.detail)
        return Response(data, media_type="application/json", headers=NO_STORE)

    async def decide(self, request: Request) -> Response:
        try:
            tenant, sha = self._authenticate(request), _sha(request)
            chosen = verdict(await json_body(request, MAX_BODY_BYTES, "a decision"))
            person = self._reviewer(request)
            answer = await apply(self.client, person, sha, tenant.name, chosen)
        except UploadError as err:
            return self._error(err.status, err.code, err.message)
        except (ReviewRefused, IdentityRefused) as err:
            return self._error(*refused(err), err.detail)
        body = {"state": answer.state.value, "reviewed_by": answer.reviewed_by}
        return JSONResponse(body, headers=NO_STORE)

    def _reviewer(self, request: Request) -> Acting:
        presented = request.headers.get(CREDENTIAL_HEADER)
        if not presented:
            raise UploadError(401, Code.OPERATOR_REQUIRED, f"{CREDENTIAL_HEADER} required")
        try:
            raw = base64.b64decode(presented, validate=True)
        except (binascii.Error, ValueError):
            raise UploadError(403, Code.OPERATOR_UNKNOWN, "not a Custody credential") from None
        return reviewer(self.client.store, raw)


def _purpose(request: Request) -> str | None:
    """``?purpose=``: the hand-out's purpose of disclosure (``starter.edge.read.purpose``)."""
    try:
        return read_purpose(request.query_params.get("purpose"))
    except ValueError as err:
        raise UploadError(400, Code.BAD_REQUEST, f"purpose: {err}") from None


def _sha(request: Request) -> str:
    sha: str = request.path_params["sha256"]
    try:
        ids.check_sha256(sha)
    except CustodyError:
        raise UploadError(400, Code.BAD_SHA256, "not a lower-case hex SHA-256") from None
    return sha
