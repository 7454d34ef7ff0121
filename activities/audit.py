"""Appending to the audit ledger from inside an activity.

Each activity records the transition it completes, with the workflow and run
it belongs to. A retried attempt may record its transition again; that is a
deterministic duplicate (same kind, document and run), never a second fact.
"""

from __future__ import annotations

from temporalio import activity

from custody.ledger import Event, Ledger
from custody.models import EventRef
from custody.stores import ObjectStore


def record(
    store: ObjectStore,
    tenant: str | None,
    kind: str,
    sha256: str,
    *,
    code: str | None = None,
    **detail: str | int | float | bool | None,
) -> Event:
    info = activity.info()
    return Ledger(store, tenant).append(
        kind,
        sha256=sha256,
        code=code,
        workflow_id=info.workflow_id,
        run_id=info.workflow_run_id,
        detail={**detail, "attempt": info.attempt},
    )


def ref(event: Event) -> EventRef:
    return EventRef(seq=event.seq, hash=event.hash)
