"""Redacted views on the I/O worker: ``custody redact`` asks, the worker makes (or finds) one.

The view is made here, with the worker's store, signing key and OCR engine
(the leak check reads the painted pages back), not in the caller's process:
the caller side holds no engine and decodes nothing. The service
(``activities.redact.service``) builds the engine once, on the first view.
Heartbeats go on while a view is made (its pages are OCRed), for at most the
step's deadline. Only the view's key and hash go back: never a removed string
(``custody.redactions``).
"""

from __future__ import annotations

import hashlib

from temporalio import activity

from activities.faults import coded
from activities.heartbeat import heartbeating
from activities.redact.policy import RedactionPolicy
from activities.redact.service import Redactor
from custody.errors import Code
from custody.redactions import RedactInput, RedactResult, view_key
from custody.stores import ObjectStore

#: Longest a view may take to make: the step's start-to-close (workflows.redact) is 20 min.
_MAKE_DEADLINE_S = 15 * 60.0


class RedactActivities:
    """The redact step, over the I/O worker's store and its one redaction service."""

    def __init__(self, store: ObjectStore, redactor: Redactor) -> None:
        self._store, self._redactor = store, redactor

    @activity.defn(name="custody.redact")
    @coded(Code.RENDER_FAILED)
    def redact(self, inp: RedactInput) -> RedactResult:
        policy = RedactionPolicy.model_validate_json(inp.policy)
        with heartbeating("redacting", _MAKE_DEADLINE_S, "redact-heartbeat"):
            self._redactor.redact(inp.sha256, inp.tenant, policy, inp.approved_by)
        key = view_key(inp.sha256, inp.tenant, policy.sha256())
        stored = self._store.get(key)
        return RedactResult(view_key=key, view_sha256=hashlib.sha256(stored).hexdigest())
