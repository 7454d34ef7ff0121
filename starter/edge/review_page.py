"""The review page: a clerk's way to decide reviews in a browser, served by the edge.

    GET  /review               sign-in, or the tenant's queue once signed in
    POST /review/sign-in       the tenant's API key (review scope) and the reviewer's credential
    GET  /review/{sha256}      the page images, the boxes of the fields, a form to decide
    POST /review/{sha256}      approve (with the fields typed in) or reject with a code
    POST /review/sign-out

**Who decides.** The sign-in takes what the review API takes (``starter.edge.reviews``):
an API key with the ``review`` scope for the tenant, and the reviewer's own
credential (the key file's content, pasted), checked against the registry. A
decision must carry the person's own signature and a browser cannot be asked
to sign without a script, so the edge keeps the credential in this process's
memory for the session (never on disk, never in the cookie), at most
``SESSION_S`` after the last request, and forgets it at sign-out. The cookie
holds only a random session id (``HttpOnly``, ``SameSite=Strict``, path
``/review``); every form carries the session's CSRF token. Every answer is
``Cache-Control: no-store``; the images are inside the page (``review_html``).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from custody.errors import CustodyError, IdentityRefused, ReviewRefused
from custody.operators import Acting
from starter.client import review
from starter.client.connect import CustodyClient
from starter.edge import review_html as html
from starter.edge import tenants
from starter.edge.review_body import Verdict
from starter.edge.reviews import NO_STORE, apply, reviewer
from starter.edge.scopes import Scope, refusal

SESSION_S = 15 * 60
COOKIE = "custody_review"
_MAX_FORM = 256 * 1024


@dataclass
class _Session:
    tenant: str
    person: Acting
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    last: float = field(default_factory=time.monotonic)


class ReviewPage:
    """The page's routes over one client; sessions live in this process only."""

    def __init__(self, client: CustodyClient) -> None:
        self.client = client
        self._sessions: dict[str, _Session] = {}

    def routes(self) -> list[Route]:
        """The pages, "sign-in" before the document's own path that would take it."""
        return [
            Route("/review", self.home, methods=["GET"]),
            Route("/review/sign-in", self.sign_in, methods=["POST"]),
            Route("/review/sign-out", self.sign_out, methods=["POST"]),
            Route("/review/{sha256}", self.document, methods=["GET"]),
            Route("/review/{sha256}", self.decide, methods=["POST"]),
        ]

    async def home(self, request: Request) -> Response:
        s = self._session(request)
        if s is None:
            return _page(html.sign_in())
        rows = [
            {"sha256": w.sha256, "reasons": w.reasons, "waiting_since": w.waiting_since.isoformat(),
             "fields_needing_review": w.fields_needing_review}
            for w in await review.waiting(self.client, s.tenant)
        ]  # fmt: skip
        return _page(html.queue(s.person.name, rows, s.csrf))

    async def sign_in(self, request: Request) -> Response:
        form = await _form(request)
        try:
            tenant = self._tenant(form.get("api_key", ""))
            person = reviewer(self.client.store, form.get("credential", "").encode())
        except IdentityRefused as err:
            return _page(html.sign_in(f"{err.code}: the credential was refused"), 403)
        except PermissionError as err:
            return _page(html.sign_in(str(err)), 403)
        self._forget_expired()
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = _Session(tenant, person)
        answer = RedirectResponse("/review", status_code=303, headers=NO_STORE)
        answer.set_cookie(COOKIE, sid, max_age=SESSION_S, path="/review", httponly=True,
                          samesite="strict", secure=request.url.scheme == "https")  # fmt: skip
        return answer

    async def sign_out(self, request: Request) -> Response:
        s, form = self._session(request), await _form(request)
        if s is not None and secrets.compare_digest(form.get("csrf", ""), s.csrf):
            self._sessions.pop(request.cookies.get(COOKIE, ""), None)
        answer = RedirectResponse("/review", status_code=303, headers=NO_STORE)
        answer.delete_cookie(COOKIE, path="/review")
        return answer

    async def document(self, request: Request) -> Response:
        s, sha = self._session(request), request.path_params["sha256"]
        if s is None:
            return RedirectResponse("/review", status_code=303, headers=NO_STORE)
        try:
            data = await review.show(self.client, sha, s.tenant, actor=s.person.name)
        except (ReviewRefused, CustodyError) as err:
            return _page(html.refused(err.code, err.detail), 404)
        return _page(html.document(_json(data), s.csrf))

    async def decide(self, request: Request) -> Response:
        s, sha, form = self._session(request), request.path_params["sha256"], await _form(request)
        if s is None or not secrets.compare_digest(form.get("csrf", ""), s.csrf):
            return _page(html.refused("UNAUTHENTICATED", "sign in again"), 403)
        try:
            answer = await apply(self.client, s.person, sha, s.tenant, _verdict(form))
        except (ReviewRefused, IdentityRefused) as err:
            return _page(html.refused(err.code, err.detail), 409)
        return _page(html.decided(sha, answer.state.value, answer.reviewed_by))

    def _session(self, request: Request) -> _Session | None:
        s = self._sessions.get(request.cookies.get(COOKIE, ""))
        now = time.monotonic()
        if s is None or now - s.last > SESSION_S:
            return None
        s.last = now
        return s

    def _forget_expired(self) -> None:
        """Drop sessions past their time, and the credentials they held."""
        now = time.monotonic()
        for sid in [k for k, v in self._sessions.items() if now - v.last > SESSION_S]:
            del self._sessions[sid]

    def _tenant(self, key: str) -> str:
        try:
            found = tenants.authenticate(self.client.store, key.strip())
        except tenants.AuthError:
            raise PermissionError("the API key was refused") from None
        production = self.client.settings.env == "production"
        why = refusal(found.scopes, Scope.REVIEW, production=production)
        if why is not None:
            raise PermissionError(f"SCOPE_DENIED: {why}")
        return found.name


def _verdict(form: dict[str, str]) -> Verdict:
    """The form as a decision: typed-in fields are the corrections; empty ones keep."""
    if form.get("verdict") == "reject":
        return Verdict(approve=False, reject_code=form.get("reject_code"), note=_note(form))
    typed = {k[6:]: v for k, v in form.items() if k.startswith("field.") and v.strip()}
    return Verdict(approve=True, fields=typed, note=_note(form))


def _note(form: dict[str, str]) -> str | None:
    return form.get("note", "").strip() or None


async def _form(request: Request) -> dict[str, str]:
    raw = (await request.body())[:_MAX_FORM]
    return {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}


def _json(data: bytes) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(data)
    return found


def _page(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=NO_STORE)
