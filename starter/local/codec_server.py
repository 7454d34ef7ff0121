"""The Temporal Web UI's remote codec endpoint (``custody codec-server`` runs it).

The UI (and ``temporal --codec-endpoint``) POSTs ``{"payloads": [...]}`` (the
protobuf JSON of ``Payloads``) to ``.../decode`` or ``.../encode``; only the
last path segment matters, per the codec server protocol. Every request needs
the bearer token (``Authorization: Bearer``, for the CLI and scripts) or the
session cookie that ``/login`` hands out for the token (for a browser, where
the UI cannot add a header); CORS admits only the UI's own origin. See
docs/phi.md for the browser steps.

The cookie carries an expiring session id, never the token
(:mod:`starter.local.codec_sessions`). It is ``SameSite=Strict``: the UI on
``localhost:<ui port>`` and this server on ``localhost:<port>`` are the same
*site* (ports do not count), so the UI's credentialed fetch still carries it,
while no other site's page can make the browser send it. Cookies cannot be
scoped to a port, so it is scoped by path instead: the browser sends it only
to ``/codec/...``, the endpoint the UI is given.
"""

from __future__ import annotations

from urllib.parse import parse_qs

import uvicorn
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from temporalio.api.common.v1 import Payloads

from custody.errors import Code, ConfigurationError
from custody.keys.codec import EncryptionCodec
from custody.keys.keyring import Keyring, require_keyring
from custody.settings import Settings
from starter.local.codec_sessions import Sessions, require_strong_token, token_matches

COOKIE = "custody_codec"
COOKIE_PATH = "/codec"  # the UI's endpoint; only the last path segment matters
LOGIN_MAX_BYTES = 4096
_LOGIN_FORM = """<!doctype html><title>Custody codec server</title>
<form method="post" action="/login"><label>Codec token
<input name="token" type="password" autocomplete="off"></label>
<button>Sign in</button></form>"""


def codec_port(settings: Settings) -> int:
    return settings.codec_port or settings.temporal_ui_port + 1


def codec_endpoint(settings: Settings) -> str:
    return f"http://localhost:{codec_port(settings)}{COOKIE_PATH}"


def ui_origins(settings: Settings) -> list[str]:
    port = settings.temporal_ui_port
    return [f"http://localhost:{port}", f"http://127.0.0.1:{port}"]


def codec_token(settings: Settings, keyring: Keyring) -> str:
    """The configured token, else the keyring's; empty or short ones refuse to start."""
    if settings.codec_token is not None:
        return require_strong_token(settings.codec_token.get_secret_value())
    if keyring.codec_token:
        return require_strong_token(keyring.codec_token)
    raise ConfigurationError(detail="no codec token: set CUSTODY_CODEC_TOKEN")


async def _capped_body(request: Request, limit: int) -> bytes | None:
    """The body, or None once it is known to exceed ``limit`` (the rest is never read)."""
    length = request.headers.get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > limit:
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return body


def create_app(
    keyring: Keyring, token: str, origins: list[str], sessions: Sessions | None = None
) -> Starlette:
    token = require_strong_token(token)
    codec = EncryptionCodec(keyring)
    live = sessions if sessions is not None else Sessions()

    def authorised(request: Request) -> bool:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            return token_matches(header[7:], token)
        # A browser: the cookie holds a session id, which is never the token.
        return live.valid(request.cookies.get(COOKIE, ""))

    async def transcode(request: Request) -> Response:
        if not authorised(request):
            return JSONResponse({"error": Code.UNAUTHORIZED}, status_code=401)
        action = request.url.path.rstrip("/").rpartition("/")[2]
        if action not in ("encode", "decode"):
            return JSONResponse({"error": Code.NOT_FOUND}, status_code=404)
        try:
            payloads = json_format.Parse(await request.body(), Payloads())
        except json_format.ParseError:
            return JSONResponse({"error": Code.BAD_REQUEST}, status_code=400)
        run = codec.encode if action == "encode" else codec.decode
        result = Payloads(payloads=await run(payloads.payloads))
        return Response(json_format.MessageToJson(result), media_type="application/json")

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return HTMLResponse(_LOGIN_FORM)
        body = await _capped_body(request, LOGIN_MAX_BYTES)
        if body is None:
            return JSONResponse({"error": Code.TOO_LARGE}, status_code=413)
        given = parse_qs(body.decode(errors="replace")).get("token", [""])[0]
        if not token_matches(given, token):
            return HTMLResponse("wrong token", status_code=401)
        done = RedirectResponse("/login/ok", status_code=303)
        # Strict: the UI on localhost:<ui port> is the same site, any other site is not.
        done.set_cookie(
            COOKIE,
            live.create(),
            max_age=live.ttl_s,
            path=COOKIE_PATH,
            httponly=True,
            samesite="strict",
        )
        return done

    async def login_ok(request: Request) -> Response:
        return HTMLResponse("Signed in: the Temporal UI can now decode payloads.")

    cors = Middleware(
        CORSMiddleware,
        allow_origins=origins,
        allow_methods=["POST"],
        allow_headers=["authorization", "content-type", "x-namespace"],
        allow_credentials=True,
    )
    routes = [
        Route("/login", login, methods=["GET", "POST"]),
        Route("/login/ok", login_ok),
        Route("/{path:path}", transcode, methods=["POST"]),
    ]
    return Starlette(routes=routes, middleware=[cors])


def serve(settings: Settings, port: int | None = None) -> None:
    """Serve until stopped; ``port`` defaults to the UI's port + 1."""
    keyring = require_keyring(settings)
    app = create_app(keyring, codec_token(settings, keyring), ui_origins(settings))
    # Loopback only: the browser and the UI are on this machine.
    uvicorn.run(app, host="127.0.0.1", port=port or codec_port(settings), log_level="warning")


def main() -> None:
    serve(Settings())


if __name__ == "__main__":
    main()
