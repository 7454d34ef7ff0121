"""Who the ledger records a command as.

A decision acts as a named identity (``custody.operators.acting``, refused
without one). Anything else a person does from the command line (a
verification, an export, a read, a release started) is recorded as the same
identity when ``CUSTODY_OPERATOR_CREDENTIAL`` names one, else as the OS
account, ``user@host``: never a secret, and never a name typed on the line.
"""

from __future__ import annotations

import getpass
import socket

from custody.operators.credentials import load_credential
from custody.operators.registry import known
from custody.settings import Settings
from custody.stores import ObjectStore


def operator() -> str:
    return f"{getpass.getuser()}@{socket.gethostname()}"


def recorded(settings: Settings, store: ObjectStore) -> str:
    """The acting identity's name if a credential is set (and is its key), else the OS account."""
    if settings.operator_credential is None:
        return operator()
    credential = load_credential(settings.operator_credential)
    identity = known(store, credential.name)
    if identity.kid != credential.kid:
        return operator()
    return identity.name
