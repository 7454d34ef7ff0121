"""The OCR worker: CPU-bound recognition on its own task queue, documents and previews.

``python -m workers.ocr``. Concurrency is sized to the cores: each engine lane
recognises one page with ``cores / lanes`` threads, so two lanes on two cores
never oversubscribe; the pool takes ``CUSTODY_OCR_PREFETCH`` documents more
than it has lanes, so staging and page writes overlap the engine
(``activities.engines.lanes``). The model is loaded once per process (once
per lane's helper process for ``rapidocr`` and ``tesseract``), before polling
starts, so the first document does not pay for it. The device (CPU, or CUDA
when ``CUSTODY_OCR_DEVICE`` allows and the runtime offers it) is chosen here,
at start, and recorded in every result; a GPU pool is the same worker on its
own task queue (``CUSTODY_OCR_TASK_QUEUE=custody-ocr-gpu``, docs/operators.md).
"""

from __future__ import annotations

import socket
import warnings
from concurrent.futures import ThreadPoolExecutor

import structlog
from temporalio.client import Client
from temporalio.worker import Worker

from activities.engines.base import OcrEngine
from activities.engines.lanes import EngineLanes
from activities.engines.selection import configured_engine, describe, give_cores
from activities.ocr import OcrActivities
from activities.preview import PreviewActivities
from activities.scratch import StagingArea
from custody import cpus
from custody.ledger.checkpoints import Notary, notary_from_settings
from custody.ledger.events import notarize
from custody.ledger.signing import local_public_keys
from custody.settings import Settings
from custody.state.ocr_config import ConfigRegistry
from custody.state.pools import MAX_LIMIT
from custody.stores import ObjectStore, open_raw_store
from workers.budget import RetryBudget
from workers.common import connect, deployment_config, prepare, run, run_until_signalled
from workers.guards import ENGINE, STORE, GuardedEngine, GuardedStore, breaker_for
from workers.interceptors import CanonicalLogInterceptor, OverloadInterceptor
from workers.metrics import Overload
from workers.slots import ACTIVITY_POLLERS, live_tuner, pool_supplier

log = structlog.get_logger("custody.worker")


def build_ocr_worker(
    client: Client, settings: Settings, store: ObjectStore, area: StagingArea, engine: OcrEngine
) -> Worker:
    limits = settings.limits
    overload = Overload.for_client(client)
    guarded = GuardedStore(store, breaker_for(STORE, settings, overload.breaker))
    if (notary := ocr_notary(settings)) is not None:
        notarize(guarded, notary)  # "recognised" events are checkpointed as they land
    guarded_engine = GuardedEngine(engine, breaker_for(ENGINE, settings, overload.breaker))
    # One engine and one set of lanes for documents and previews: no second model, no more CPU.
    lanes = EngineLanes(settings.ocr_concurrency)
    ocr = OcrActivities(
        guarded,
        area,
        guarded_engine,
        limits.ocr_dpi,
        settings.ocr_page_deadline_s,
        limits.text_layer,
        settings.ocr_store_wait_s,
        lanes,
        limits,
    )
    preview = PreviewActivities(guarded, area, guarded_engine, lanes, limits)
    return Worker(
        client,
        task_queue=settings.ocr_task_queue,
        activities=[ocr.recognise, preview.preview],
        # Threads up to the ceiling; the live limit decides how many are busy.
        activity_executor=ThreadPoolExecutor(MAX_LIMIT),
        tuner=live_tuner(pool_supplier(settings, store, "ocr")),
        activity_task_poller_behavior=ACTIVITY_POLLERS,
        deployment_config=deployment_config(settings),
        interceptors=[
            CanonicalLogInterceptor(client),
            OverloadInterceptor(
                RetryBudget(settings.retry_budget_per_min), overload, settings.breaker_open_s
            ),
        ],
    )


def ocr_notary(settings: Settings) -> Notary | None:
    """A notary when this worker holds the signing key; None leaves its appends to
    the next I/O-worker append (or ``custody audit seal``), and says so once."""
    secret = settings.signing_key.get_secret_value() if settings.signing_key else None
    production = settings.env == "production"
    if local_public_keys(settings.signing_path, secret, production=production):
        return notary_from_settings(settings)
    log.warning("ocr_appends_unsealed", reason="no signing key on this worker")
    return None


async def main() -> None:
    # torch's notices about CPU-only pinning and quantisation, once per box: noise.
    warnings.filterwarnings("ignore", message=".*(pin_memory|quantiz).*")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="torch")
    settings = Settings()
    # Before any thread starts, so they all inherit it: the engine's cores are its own.
    cpu_plan = settings.cpu_plan()
    cpus.confine(cpu_plan)
    store, area, sweeper = prepare(settings)
    # Loads the models now: fail fast, and the first page does not pay.
    registry = ConfigRegistry(open_raw_store(settings))
    engine = configured_engine(settings, registry, f"ocr-worker@{socket.gethostname()}")
    config = describe(engine)
    if cpu_plan is not None and give_cores(engine, cpu_plan):
        log.info("engine_cpus", engine=list(cpu_plan.engine), rest=sorted(cpu_plan.rest))
    else:
        # EasyOCR runs in this process, and a GPU engine needs no cores of its own.
        cpus.release(cpu_plan)
    device = config.params.get("device", "cpu")
    log.info(
        "ocr_engine_ready",
        engine=engine.name,
        version=engine.version,
        config=config.digest,
        device=device,
        task_queue=settings.ocr_task_queue,
    )
    client = await connect(settings, settings.ocr_metrics_port)
    await run_until_signalled(build_ocr_worker(client, settings, store, area, engine), sweeper.stop)


if __name__ == "__main__":
    run(main)
