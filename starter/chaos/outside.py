"""Faults from outside the processes under test: an S3 endpoint to stop, a disk to fill.

``S3Endpoint`` is moto's S3 server (as ``ThreadedMotoServer`` runs it) over real
HTTP on a fixed loopback port, in the runner's process; stopping it closes the
listening socket and cuts the connections it was serving. moto keeps its buckets in
process-wide backends, so a server stopped and started again on the same port
serves the same objects: to the workers it is an S3 outage, not a new S3.

``SmallDisk`` is a tmpfs of a few MiB mounted as a staging root, filled with
one file and freed by deleting it. Mounting needs root (CI runs as root); when
it is refused the scenario reports a coded skip instead of pretending.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

from custody.extras import needs

BUCKET = "custody-chaos"
FILLER = "chaos-fill.bin"  # not ``stg-*``: the staging check must not count it
MOUNT_DENIED = "STAGING_MOUNT_DENIED"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class S3Endpoint:
    """moto's S3 server that can go away and come back with its state."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: Any = None
        self._thread: threading.Thread | None = None
        # Connections being served: a stop cuts them too, as a dead endpoint would.
        self._open: set[socket.socket] = set()
        # One line a request on stderr would drown the runner's own output.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

    @property
    def up(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        # moto's own ThreadedMotoServer, but with a handler that registers its
        # connection: that server's stop() leaves keep-alive connections served.
        with needs("chaos", "custody chaos store-outage (moto's S3 server)"):
            from moto.moto_server.werkzeug_app import (
                DomainDispatcherApplication,
                MotoRequestHandler,
                create_backend_app,
            )
            from werkzeug.serving import make_server

        tracked = self._open

        class Tracked(MotoRequestHandler):
            def setup(self) -> None:
                super().setup()
                tracked.add(self.connection)

            def finish(self) -> None:
                tracked.discard(self.connection)
                super().finish()

        app = DomainDispatcherApplication(create_backend_app)
        server = make_server("127.0.0.1", self.port, app, True, request_handler=Tracked)
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        self._server = server

    def stop(self) -> None:
        """Refuse new connections and cut open ones: in flight and new requests both fail."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()  # shutdown() alone leaves the socket listening
        for conn in list(self._open):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None

    def env(self) -> dict[str, str]:
        """What a worker needs to use this endpoint as its object store."""
        return {
            "CUSTODY_STORE": "s3",
            "CUSTODY_S3_ENDPOINT_URL": self.url,
            "CUSTODY_S3_BUCKET": BUCKET,
            "CUSTODY_S3_ACCESS_KEY_ID": "chaos",
            "CUSTODY_S3_SECRET_ACCESS_KEY": "chaos",
        }


class SmallDisk:
    """A tmpfs mounted at ``path`` (root only); ``fill`` and ``free`` toggle ENOSPC."""

    def __init__(self, path: Path, size_kib: int) -> None:
        self.path = path
        self.size_kib = size_kib
        self.mounted = False

    def mount(self) -> str | None:
        """Mount it; None on success, else the coded reason it could not be."""
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        opts = f"size={self.size_kib}k,mode=0700"
        out = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(self.path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            return f"{MOUNT_DENIED}: mount exited {out.returncode} (needs root)"
        self.mounted = True
        return None

    def fill(self) -> int:
        """Write one file until the filesystem is full; returns its size in bytes."""
        written = 0
        fd = os.open(self.path / FILLER, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            # Big blocks first, then page-sized ones: tmpfs allocates whole pages.
            for block in (b"\0" * (1 << 20), b"\0" * 4096):
                while True:
                    try:
                        written += os.write(fd, block)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break
        finally:
            os.close(fd)
        return written

    def free(self) -> None:
        (self.path / FILLER).unlink(missing_ok=True)

    def unmount(self) -> None:
        if self.mounted:
            self.free()
            with contextlib.suppress(subprocess.CalledProcessError):
                subprocess.run(["umount", "-l", str(self.path)], check=True, capture_output=True)
            self.mounted = False
