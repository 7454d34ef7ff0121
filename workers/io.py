"""The I/O worker: the document workflow plus staging, validation, check, publish.

``python -m workers.io``. Runs beside the OCR worker, scaled apart from it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from activities.output import OutputActivities
from activities.publish import PublishActivities
from activities.release import ReleaseActivities
from activities.scratch import StagingArea
from activities.staging import StagingActivities
from activities.validation import ValidationActivities
from custody.pools import MAX_LIMIT
from custody.settings import Settings
from custody.signing import signer_from_settings
from custody.stores import ObjectStore, open_store
from workers.common import INTERCEPTORS, connect, run, run_until_signalled, start_staging
from workers.interceptors import HeartbeatKeeper
from workers.logging import configure_logging
from workers.slots import ACTIVITY_POLLERS, live_tuner, pool_supplier
from workflows.document import DocumentWorkflow
from workflows.release import ReleaseWorkflow


def io_activities(
    settings: Settings, store: ObjectStore, area: StagingArea
) -> list[Callable[..., Any]]:
    staging = StagingActivities(store, area)
    validation = ValidationActivities(store, area, settings.limits)
    output = OutputActivities(store, settings.confidence_floor, settings.confidence_review)
    signer = signer_from_settings(settings)
    publish = PublishActivities(store, signer)
    release = ReleaseActivities(store, area, signer, settings)
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
    ]


def build_io_worker(
    client: Client, settings: Settings, store: ObjectStore, area: StagingArea
) -> Worker:
    return Worker(
        client,
        task_queue=settings.io_task_queue,
        workflows=[DocumentWorkflow, ReleaseWorkflow],
        activities=io_activities(settings, store, area),
        # Threads up to the ceiling; the live limit decides how many are busy.
        activity_executor=ThreadPoolExecutor(MAX_LIMIT),
        tuner=live_tuner(pool_supplier(settings, store, "io")),
        activity_task_poller_behavior=ACTIVITY_POLLERS,
        interceptors=[*INTERCEPTORS, HeartbeatKeeper()],
    )


async def main() -> None:
    settings = Settings()
    configure_logging(settings)
    store = open_store(settings)
    area, sweeper = start_staging(settings)
    client = await connect(settings, settings.io_metrics_port)
    await run_until_signalled(build_io_worker(client, settings, store, area), sweeper.stop)


if __name__ == "__main__":
    run(main)
