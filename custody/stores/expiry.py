"""Scratch objects expire on a timer, whatever the workers do.

``intake/`` (submitted bytes until staging moves them to ``sources/``),
``work/`` (OCR output until publish) and ``manual/`` (the parked lane) are
scratch by nature: a worker normally clears them, but a crashed or forgotten
run leaves them behind. :func:`expire` removes them, from ``custody retention
sweep`` or the I/O worker's :class:`ScratchExpiry`; on S3 the bucket's lifecycle
rules also expire ``work/`` and ``manual/`` (deploy/s3/evidence/lifecycle.json),
never ``intake/``, where only this module can tell what is held.

One exception: an intake object of a document that concluded without its bytes
reaching ``sources/`` (quarantined at staging, ``HASH_MISMATCH``) is that
document's only copy of what was sent. It is held: quarantined sources go only
with an evidence owner's sign-off (starter.evidence.retention).

An intake object with no record, no outcome and (the caller asks Temporal) no
workflow is an orphan: :func:`unclaimed_intake` names the candidates.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import structlog
from pydantic import BaseModel

from custody import ids
from custody.settings import Settings
from custody.stores import ObjectMissing, ObjectStore

log = structlog.get_logger("starter.evidence.retention")

INTAKE, WORK, MANUAL = "intake/", "work/", "manual/"
#: An intake object with no record or outcome, and its document (sha256, tenant).
_Unclaimed = tuple["Scratch", str, str | None]
_DAY = 86400.0


class Scratch(BaseModel):
    """One scratch object past (or, when reported, short of) its age limit."""

    key: str
    age_s: float
    deleted: bool = False


def max_ages(settings: Settings) -> dict[str, float]:
    """Seconds each scratch prefix is kept; the S3 lifecycle rules use the same days."""
    scratch = settings.scratch_max_age_days * _DAY
    return {INTAKE: scratch, WORK: scratch, MANUAL: settings.manual_max_age_days * _DAY}


def _modified_at(store: ObjectStore, key: str) -> datetime | None:
    """When the object was last written, from the backend under any wrappers; None if unknown."""
    base = store
    while (inner := getattr(base, "inner", None)) is not None:
        base = inner
    root, client = getattr(base, "root", None), getattr(base, "client", None)
    if root is not None:
        try:
            return datetime.fromtimestamp((root / key).stat().st_mtime, UTC)
        except OSError:
            return None
    if client is not None:
        from botocore.exceptions import ClientError

        try:
            head = client.head_object(Bucket=base.bucket, Key=base.prefix + key)  # type: ignore[attr-defined]
        except ClientError:
            return None
        return head["LastModified"]  # type: ignore[no-any-return]
    return None


def concluded(store: ObjectStore, sha256: str, tenant: str | None) -> bool:
    """Whether the store holds a published record or an outcome for the document."""
    if store.exists(ids.record_key(sha256, tenant)):
        return True
    return next(iter(store.list(ids.outcome_prefix(sha256, tenant))), None) is not None


def _intake_document(key: str) -> tuple[str, str | None] | None:
    """(sha256, tenant) of ``intake/<scope>/<sha256>``; None for anything else."""
    parts = key.split("/")
    if len(parts) != 3 or len(parts[2]) != 64:
        return None
    return parts[2], (None if parts[1] == "_" else parts[1])


def held(store: ObjectStore, key: str) -> bool:
    """An intake object that is a concluded document's only copy of its bytes."""
    doc = _intake_document(key) if key.startswith(INTAKE) else None
    if doc is None:
        return False
    sha256, tenant = doc
    return not store.exists(ids.source_key(sha256, tenant)) and concluded(store, sha256, tenant)


def expire(
    store: ObjectStore, ages: dict[str, float], now: datetime, *, dry_run: bool = False
) -> list[Scratch]:
    """Delete scratch objects older than their prefix's limit; the ones it found."""
    found = []
    for prefix, limit in ages.items():
        for key in list(store.list(prefix)):
            written = _modified_at(store, key)
            age = (now - written).total_seconds() if written else 0.0
            if age < limit or held(store, key):
                continue
            if not dry_run:
                store.delete(key)
            found.append(Scratch(key=key, age_s=round(age, 1), deleted=not dry_run))
    return found


def unclaimed_intake(store: ObjectStore, now: datetime) -> Iterator[_Unclaimed]:
    """Intake objects whose document has no record and no outcome: orphans unless a
    workflow holds them, which only Temporal can say."""
    for key in list(store.list(INTAKE)):
        doc = _intake_document(key)
        if doc is None or concluded(store, *doc):
            continue
        written = _modified_at(store, key)
        if written is None:
            continue  # gone meanwhile (staging moved it)
        yield Scratch(key=key, age_s=round((now - written).total_seconds(), 1)), *doc


def delete_orphan(store: ObjectStore, key: str) -> bool:
    try:
        store.size(key)
    except ObjectMissing:
        return False
    store.delete(key)
    return True


class ScratchExpiry(threading.Thread):
    """Runs :func:`expire` on a timer in a worker process, whatever the store."""

    def __init__(self, store: ObjectStore, settings: Settings) -> None:
        super().__init__(name="scratch-expiry", daemon=True)
        self._store, self._ages = store, max_ages(settings)
        self._interval = settings.retention_sweep_interval_s
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self._interval):
            try:
                gone = expire(self._store, self._ages, datetime.now(UTC))
                if gone:
                    log.info("scratch_expired", objects=len(gone))
            except Exception as exc:  # the next round tries again; the worker keeps running
                log.warning("scratch_expiry_failed", error=type(exc).__name__)

    def stop(self) -> None:
        self._stop_event.set()
