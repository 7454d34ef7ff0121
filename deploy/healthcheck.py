"""The container's HEALTHCHECK: is this process's own port open on loopback?

A worker's port is its Prometheus endpoint (``CUSTODY_IO_METRICS_PORT`` /
``CUSTODY_OCR_METRICS_PORT``), opened once it has connected to Temporal; the
edge's is its HTTP port; the codec server's its loopback port. Each role sets
``CUSTODY_HEALTH_PORT`` to the one it serves. Standard library only, so the
check costs no import of Custody.
"""

from __future__ import annotations

import os
import socket
import sys


def main() -> int:
    port = int(os.environ.get("CUSTODY_HEALTH_PORT", "9464"))
    with socket.socket() as sock:
        sock.settimeout(3.0)
        return 0 if sock.connect_ex(("127.0.0.1", port)) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
