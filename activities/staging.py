"""Stage: verify the submitted bytes and hand them to the durable source store.

The submitter uploaded the bytes to ``intake/``. Staging streams them into a
private scratch file, hashing as it goes; bytes that do not hash to the
workflow's SHA-256 are quarantined as ``HASH_MISMATCH`` and never retried.
Verified bytes are created (never overwritten) under ``sources/``, and only
then is the intake object removed: an atomic handoff, verified before delete.
The intake reference's signature, tenant and hash are checked before the
intake object is touched (``custody.refs``), and the source key handed back is
signed for the activities after this one.
"""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.audit import record
from activities.faults import coded
from activities.scratch import StagingArea
from custody import ids
from custody.errors import Code, Quarantined
from custody.models import StageInput, StageResult
from custody.refs import RefKeys
from custody.stores import ObjectMissing, ObjectStore

log = structlog.get_logger("custody.activity")


class StagingActivities:
    def __init__(self, store: ObjectStore, area: StagingArea) -> None:
        self._store = store
        self._area = area
        self._refs = RefKeys.for_store(store)

    @activity.defn(name="custody.stage")
    @coded(Code.STORE_UNAVAILABLE)
    def stage(self, inp: StageInput) -> StageResult:
        intake = self._refs.check(inp.intake_key, inp.tenant, inp.sha256, inp.intake_sig)
        source = ids.source_key(inp.sha256, inp.tenant)
        source_sig = self._refs.sign(source, inp.tenant, inp.sha256)
        attempt = activity.info().attempt
        if not self._store.exists(intake) and self._store.exists(source):
            # A retry after the handoff already happened: nothing left to do.
            size = self._store.size(source)
            return StageResult(
                source_key=source, size_bytes=size, attempt=attempt, source_sig=source_sig
            )
        try:
            with self._area.staged(self._store, intake, inp.sha256) as path:
                with path.open("rb") as staged:
                    self._store.create_from_file(source, staged)
                size = path.stat().st_size
        except ObjectMissing:
            raise Quarantined(Code.SOURCE_MISSING, "no intake object for this document") from None
        self._store.delete(intake)
        record(self._store, inp.tenant, "staged", inp.sha256, size_bytes=size)
        return StageResult(
            source_key=source, size_bytes=size, attempt=attempt, source_sig=source_sig
        )
