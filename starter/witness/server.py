"""``custody witness serve``: the C2SP tlog-witness HTTP endpoint over a :class:`WitnessState`.

    POST /add-checkpoint    200 cosignature line(s); 400 malformed or old > size; 403 no
                            trusted signature; 404 unknown log; 409 the size it holds
                            (``text/x.tlog.size``); 422 the consistency proof fails

Plain ``http.server`` threads: a witness answers one small request per
integration of each log it watches. Bodies beyond 64 KiB are refused (a
checkpoint with a 63-hash proof is under 4 KiB). On start it writes
``endpoint.json`` (URL and vkey) into its directory, which is how the stack
``custody up`` starts, and the development settings, find it.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from custody.ledger.witness import ENDPOINT_FILE
from starter.witness.state import WitnessState

_MAX_BODY = 64 * 1024


def make_server(state: WitnessState, host: str, port: int) -> ThreadingHTTPServer:
    """The server (not yet serving); ``port`` 0 picks a free one."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or -1)
            if self.path.rstrip("/") != "/add-checkpoint":
                return self._answer(404, b"not found\n", "text/plain")
            if not 0 <= length <= _MAX_BODY:
                return self._answer(400, b"body missing or too large\n", "text/plain")
            answer = state.add_checkpoint(self.rfile.read(length))
            self._answer(answer.status, answer.body, answer.kind)

        def _answer(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return  # requests carry only checkpoints, but stay quiet: the caller logs refusals

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def write_endpoint(state: WitnessState, server: ThreadingHTTPServer) -> Path:
    host, port = str(server.server_address[0]), int(server.server_address[1])
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"
    path = state.dir / ENDPOINT_FILE
    path.write_text(json.dumps({"url": url, "vkey": state.vkey}) + "\n")
    return path
