"""Appending to the audit ledger from inside an activity.

Each activity records the transition it completes, with the workflow and run
it belongs to. Recording is idempotent per step: an event carries the
activity's ID (``step``, the same on every attempt), and a retried attempt that
finds its step's event already written, say because signing or witnessing the
checkpoint failed after the append, seals that event again instead of
appending a twin.

Rejections, quarantines and releases are recorded here like any transition; on
the I/O worker the store carries a notary (``custody.ledger.notarize``), so each
append ends with a signed checkpoint sent to the witness (custody.ledger.checkpoints).
"""

from __future__ import annotations

from temporalio import activity

from custody.ledger.events import Event, Ledger
from custody.models import EventRef
from custody.stores import ObjectStore


def record(
    store: ObjectStore,
    tenant: str | None,
    kind: str,
    sha256: str,
    *,
    code: str | None = None,
    actor: str | None = None,
    **detail: str | int | float | bool | None,
) -> Event:
    info = activity.info()
    ledger = Ledger(store, tenant)
    if info.attempt > 1 and (earlier := _written(ledger, kind, sha256, info)) is not None:
        ledger.seal(earlier.seq)  # the checkpoint is what the failed attempt may lack
        return earlier
    return ledger.append(
        kind,
        sha256=sha256,
        code=code,
        actor=actor,
        workflow_id=info.workflow_id,
        run_id=info.workflow_run_id,
        detail={**detail, "attempt": info.attempt, "step": info.activity_id},
    )


def _written(ledger: Ledger, kind: str, sha256: str, info: activity.Info) -> Event | None:
    """This step's event from an earlier attempt, found through the by-document index."""
    for seq in sorted(ledger.indexed_seqs(sha256), reverse=True):
        event = ledger.find(seq)
        if (
            event is not None
            and event.kind == kind
            and event.run_id == info.workflow_run_id
            and event.detail.get("step") == info.activity_id
        ):
            return event
    return None


def ref(event: Event) -> EventRef:
    return EventRef(seq=event.seq, hash=event.hash)
