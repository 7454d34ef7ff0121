"""The I/O worker: the workflows plus staging, validation, check, publish, release, redact.

``python -m workers.io``. Runs beside the OCR worker, scaled apart from it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from activities.approval import ApprovalActivities
from activities.output import OutputActivities
from activities.publish import PublishActivities
from activities.redact.service import Redactor
from activities.redaction import RedactActivities
from activities.release import ReleaseActivities
from activities.review import ReviewActivities
from activities.review_pages import ReviewPages
from activities.scratch import StagingArea
from activities.staging import StagingActivities
from activities.validation import ValidationActivities
from custody.ledger.checkpoints import notary_from_settings
from custody.ledger.events import notarize
from custody.ledger.signing import signer_from_settings
from custody.settings import Settings
from custody.state.pools import MAX_LIMIT
from custody.stores import ObjectStore
from custody.stores.expiry import ScratchExpiry
from workers.budget import RetryBudget
from workers.common import (
    INTERCEPTORS,
    connect,
    deployment_config,
    prepare,
    run,
    run_until_signalled,
)
from workers.guards import STORE, GuardedStore, breaker_for
from workers.interceptors import HeartbeatKeeper, OverloadInterceptor
from workers.metrics import Overload
from workers.slots import ACTIVITY_POLLERS, live_tuner, pool_supplier
from workers.versioning import VERSIONED_WORKFLOWS, WORKFLOWS


def io_activities(
    settings: Settings, store: ObjectStore, area: StagingArea
) -> list[Callable[..., Any]]:
    staging = StagingActivities(store, area)
    validation = ValidationActivities(store, area, settings.limits)
    output = OutputActivities(store, settings.confidence_floor, settings.confidence_review)
    signer = signer_from_settings(settings)
    # Every append through this store ends with a signed, witnessed checkpoint.
    notarize(store, notary_from_settings(settings, signer))
    publish = PublishActivities(store, signer)
    release = ReleaseActivities(store, area, signer, settings)
    # Views OCR their painted pages: the engine loads on this worker's first view.
    views = Redactor.configured(store, signer, area, settings)
    redact = RedactActivities(store, views)
    review = ReviewActivities(store, signer)
    review_pages = ReviewPages(store, area, settings.limits)
    return [
        staging.stage,
        validation.validate,
        output.check,
        publish.publish,
        publish.conclude,
        release.prepare,
        release.render,
        release.record,
        release.deliver,
        release.receipt,
        release.close,
        ApprovalActivities(store).accept,
        redact.redact,
        review.accept,
        review.record,
        review.overdue,
        review_pages.render,
    ]


def build_io_worker(
    client: Client, settings: Settings, store: ObjectStore, area: StagingArea
) -> Worker:
    overload = Overload.for_client(client)
    # Activities reach the store through its breaker; the pool limits do not need to.
    guarded = GuardedStore(store, breaker_for(STORE, settings, overload.breaker))
    budget = RetryBudget(settings.retry_budget_per_min)
    overloaded = OverloadInterceptor(budget, overload, settings.breaker_open_s)
    versioned = deployment_config(settings)
    return Worker(
        client,
        task_queue=settings.io_task_queue,
        # A versioned worker states each type's behaviour (workers.versioning).
        workflows=VERSIONED_WORKFLOWS if versioned else WORKFLOWS,
        activities=io_activities(settings, guarded, area),
        # Threads up to the ceiling; the live limit decides how many are busy.
        activity_executor=ThreadPoolExecutor(MAX_LIMIT),
        tuner=live_tuner(pool_supplier(settings, store, "io")),
        activity_task_poller_behavior=ACTIVITY_POLLERS,
        deployment_config=versioned,
        interceptors=[*INTERCEPTORS, overloaded, HeartbeatKeeper(_deadlines(settings))],
    )


#: Reading a packet's files from the store, before its delivery's own clock starts.
_DELIVERY_GRACE_S = 15.0


def _deadlines(settings: Settings) -> dict[str, float]:
    """Steps the heartbeat keeper stops keeping alive past their wall-clock bound."""
    return {"custody.release.deliver": settings.egress_push_deadline_s + _DELIVERY_GRACE_S}


async def main() -> None:
    settings = Settings()
    store, area, sweeper = prepare(settings)
    # Scratch objects expire on a timer here, on S3 too: the bucket's lifecycle
    # rules expire work/ and manual/, but not intake/, whose held objects (a
    # quarantined document's only copy) only this sweep can tell apart.
    expiry = ScratchExpiry(store, settings)
    expiry.start()

    def stop() -> None:
        sweeper.stop()
        expiry.stop()

    client = await connect(settings, settings.io_metrics_port)
    await run_until_signalled(build_io_worker(client, settings, store, area), stop)


if __name__ == "__main__":
    run(main)
