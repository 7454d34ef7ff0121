"""Redacted views on the I/O worker: ``custody redact`` asks, the worker makes (or finds) one.

The view is made here, with the worker's store, signing key and OCR engine
(the leak check reads the painted pages back), not in the caller's process:
the caller side holds no engine and decodes nothing. The engine is built once,
on the first view this worker makes. Heartbeats go on while a view is made
(its pages are OCRed), for at most the step's deadline. Only the view's key
and hash go back: never a removed string (``custody.redactions``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable

from temporalio import activity

from activities.engines.base import OcrEngine
from activities.faults import coded
from activities.heartbeat import heartbeating
from activities.redact.policy import RedactionPolicy
from activities.redact.service import Redactor
from activities.scratch import StagingArea
from custody.errors import Code
from custody.ledger.signing import Signer
from custody.redactions import RedactInput, RedactResult, view_key
from custody.settings import Limits
from custody.stores import ObjectStore

#: Longest a view may take to make: the step's start-to-close (workflows.redact) is 20 min.
_MAKE_DEADLINE_S = 15 * 60.0


class RedactActivities:
    """The redact step, over the I/O worker's store, signing key and staging area."""

    def __init__(
        self,
        store: ObjectStore,
        signer: Signer,
        area: StagingArea,
        engine: Callable[[], OcrEngine],
        limits: Limits,
    ) -> None:
        self._store = store
        self._build, self._lock = engine, threading.Lock()
        self._engine: OcrEngine | None = None
        self._redactor = Redactor(store, signer, area, self._engine_once, limits)

    @activity.defn(name="custody.redact")
    @coded(Code.RENDER_FAILED)
    def redact(self, inp: RedactInput) -> RedactResult:
        policy = RedactionPolicy.model_validate_json(inp.policy)
        with heartbeating("redacting", _MAKE_DEADLINE_S, "redact-heartbeat"):
            self._redactor.redact(inp.sha256, inp.tenant, policy, inp.approved_by)
        key = view_key(inp.sha256, inp.tenant, policy.sha256())
        stored = self._store.get(key)
        return RedactResult(view_key=key, view_sha256=hashlib.sha256(stored).hexdigest())

    def _engine_once(self) -> OcrEngine:
        # Views made at once on this worker's threads share the one engine.
        with self._lock:
            if self._engine is None:
                self._engine = self._build()
            return self._engine
