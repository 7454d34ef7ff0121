"""Validate: decide whether a document may spend OCR, before any is spent.

The decoding of untrusted bytes happens in a child process with time and
memory bounds (``activities.untrusted``), so a hostile file costs one attempt,
never a worker. A broken rule is a ``DocumentRejected`` with a stable code and is
never retried; the policy version in force is returned for the record.
"""

from __future__ import annotations

from temporalio import activity

from activities.faults import coded
from activities.scratch import StagingArea
from activities.untrusted import inspect_untrusted
from custody.errors import Code
from custody.models import ValidateInput, ValidationResult
from custody.settings import Limits
from custody.stores import ObjectStore


class ValidationActivities:
    def __init__(self, store: ObjectStore, area: StagingArea, limits: Limits) -> None:
        self._store = store
        self._area = area
        self._limits = limits
        self._policy_version = limits.policy_version()

    @activity.defn(name="custody.validate")
    @coded(Code.INTERNAL)
    def validate(self, inp: ValidateInput) -> ValidationResult:
        with self._area.staged(self._store, inp.source_key, inp.sha256) as path:
            found = inspect_untrusted(path, self._limits)
        return ValidationResult(
            media_type=found.media_type,
            pages=found.pages,
            policy_version=self._policy_version,
            attempt=activity.info().attempt,
        )
