"""Who an operator is, as the ledger records it: ``user@host``, never a secret."""

from __future__ import annotations

import getpass
import socket


def operator() -> str:
    return f"{getpass.getuser()}@{socket.gethostname()}"
