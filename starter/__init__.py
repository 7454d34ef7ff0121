"""Custody's Python SDK: submit a document, wait for it, read what became of it.

    import asyncio
    import starter

    async def main() -> None:
        custody = await starter.connect()  # the deployment in CUSTODY_HOME, else ./.custody
        sub = await starter.submit(custody, "referral.pdf", tenant="clinic-a")
        result = await starter.wait(custody, sub.sha256, tenant="clinic-a")
        rel = await starter.release(custody, [sub.sha256], to="clinic-b",
                                    tenant="clinic-a", actor="svc:referrals")

    asyncio.run(main())

``connect`` finds the deployment by its home and refuses one without keys
(``ConfigurationError``, before anything is sent): see ``starter.client.connect``.

Importing this package loads nothing but this table: each name is imported on
first use (PEP 562), so ``custody --help`` or a store-only command never pays
for the Temporal client, and nothing here ever loads an OCR engine, workflow
code or numpy. The sub-packages are the other roles (``cli``, ``edge``,
``evidence``, ``local``, ``bench``, ``chaos``); each is imported only by
whoever uses it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from custody.errors import ConfigurationError, NotFound
    from custody.models import DocState, DocumentResult
    from custody.settings import Settings
    from starter.client.admission import AdmissionRequest
    from starter.client.connect import CustodyClient, connect
    from starter.client.documents import Hashed
    from starter.client.read import (
        ListRow,
        ResultView,
        StatusView,
        list_documents,
        result,
        status,
    )
    from starter.client.release import release, wait_release
    from starter.client.submit import Submission, submit, wait

_HOME = {
    "ConfigurationError": "custody.errors",
    "NotFound": "custody.errors",
    "DocState": "custody.models",
    "DocumentResult": "custody.models",
    "Settings": "custody.settings",
    "CustodyClient": "starter.client.connect",
    "connect": "starter.client.connect",
    "ListRow": "starter.client.read",
    "ResultView": "starter.client.read",
    "StatusView": "starter.client.read",
    "list_documents": "starter.client.read",
    "result": "starter.client.read",
    "status": "starter.client.read",
    "release": "starter.client.release",
    "wait_release": "starter.client.release",
    "AdmissionRequest": "starter.client.admission",
    "Hashed": "starter.client.documents",
    "Submission": "starter.client.submit",
    "submit": "starter.client.submit",
    "wait": "starter.client.submit",
}

__all__ = [
    "AdmissionRequest",
    "ConfigurationError",
    "CustodyClient",
    "DocState",
    "DocumentResult",
    "Hashed",
    "ListRow",
    "NotFound",
    "ResultView",
    "Settings",
    "StatusView",
    "Submission",
    "connect",
    "list_documents",
    "release",
    "result",
    "status",
    "submit",
    "wait",
    "wait_release",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'starter' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value  # once imported, a plain attribute
    return value
