"""Wiring shared by both workers: settings -> clients -> Worker."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import structlog
from temporalio.client import Client
from temporalio.common import WorkerDeploymentVersion
from temporalio.worker import Worker, WorkerDeploymentConfig

from activities.scratch import StagingArea, Sweeper
from custody.errors import ConfigurationError
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from custody.temporal import connect_temporal
from workers import metrics
from workers.interceptors import CanonicalLogInterceptor
from workers.logging import configure_logging

log = structlog.get_logger("custody.worker")


async def connect(settings: Settings, metrics_port: int | None = None) -> Client:
    """The worker's client: its runtime serves Prometheus on ``metrics_port`` when set.

    Tracing rides on the client: the worker takes its interceptors from it.
    """
    runtime = metrics.runtime_for(settings, metrics_port)
    if runtime is not None:
        log.info("metrics_endpoint", address=f"{settings.metrics_host}:{metrics_port}")
    return await connect_temporal(settings, service="custody-worker", runtime=runtime)


INTERCEPTORS = [CanonicalLogInterceptor()]


def deployment_config(settings: Settings) -> WorkerDeploymentConfig | None:
    """Worker Versioning: this worker's deployment version, or None to run unversioned.

    Each workflow type states its own behaviour (pinned or auto-upgrade) in its
    ``@workflow.defn``; deploy/RUNBOOK.md says why each one.
    """
    name, build = settings.deployment_name, settings.build_id
    if not name and not build:
        return None
    if not name or not build:
        raise ConfigurationError(detail="CUSTODY_DEPLOYMENT_NAME and CUSTODY_BUILD_ID go together")
    version = WorkerDeploymentVersion(deployment_name=name, build_id=build)
    return WorkerDeploymentConfig(version=version, use_worker_versioning=True)


def prepare(settings: Settings) -> tuple[ObjectStore, StagingArea, Sweeper]:
    """What each worker starts on, before its own parts: logging, the store, the staging
    folder (cleared, then swept on a timer) and the decoding sandbox's layers, checked."""
    configure_logging(settings)
    store = open_store(settings)
    area, sweeper = start_staging(settings)
    check_sandbox(settings)  # production refuses to start without every layer
    return store, area, sweeper


def start_staging(settings: Settings) -> tuple[StagingArea, Sweeper]:
    """This process's staging folder, after clearing what dead workers left behind."""
    area = StagingArea(settings.staging_path)
    area.prepare()
    check_staging_at_rest(settings)
    area.sweep(settings.staging_max_age_s)
    sweeper = Sweeper(area, settings.staging_max_age_s, settings.sweep_interval_s)
    sweeper.start()
    return area, sweeper


def check_sandbox(settings: Settings) -> None:
    """Start the decoding child's zygote and check its layers: in production a missing
    one refuses the worker (``SANDBOX_DEGRADED``); elsewhere it is logged, by code."""
    from activities.inspect.layers import check_sandbox as layers

    degraded = layers(settings.env == "production")
    if degraded:
        log.warning("sandbox_degraded", layers=",".join(degraded))


_RAM_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})


def check_staging_at_rest(settings: Settings, mounts: Path = Path("/proc/mounts")) -> str:
    """Refuse, in production, a staging folder on an ordinary disk; returns its filesystem type.

    Staged documents are plaintext for the length of one activity (the decoders
    need a file). In production they must never reach an unencrypted disk: the
    folder must be tmpfs, or on a volume the operator declares encrypted with
    ``CUSTODY_STAGING_ENCRYPTED_VOLUME=true``.
    """
    fstype = _filesystem_of(settings.staging_path, mounts)
    if (
        settings.env == "production"
        and fstype not in _RAM_FILESYSTEMS
        and not settings.staging_encrypted_volume
    ):
        raise ConfigurationError(
            detail=f"staging folder is on {fstype}, not tmpfs: mount a tmpfs there, or set "
            "CUSTODY_STAGING_ENCRYPTED_VOLUME=true if the volume is encrypted at rest"
        )
    return fstype


def _filesystem_of(path: Path, mounts: Path) -> str:
    """The type of the filesystem holding ``path``: the longest mount point above it."""
    target = path.resolve()
    best, fstype = -1, "unknown"
    for line in mounts.read_text().splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(fields[1].replace("\\040", " "))
        if (target == point or point in target.parents) and len(str(point)) > best:
            best, fstype = len(str(point)), fields[2]
    return fstype


async def run_until_signalled(worker: Worker, on_stop: Callable[[], None] | None = None) -> None:
    """Run ``worker`` until SIGTERM or SIGINT, then shut it down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        log.info("worker_started", task_queue=worker.task_queue)
        await stop.wait()
        log.info("worker_stopping", task_queue=worker.task_queue)
    if on_stop:
        on_stop()


#: The exit status of a worker that cannot start as configured: the CLI's "misconfigured".
EXIT_MISCONFIGURED = 9


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a worker's ``main``; a deployment it cannot start in (a missing extra, key or
    setting) is one coded log line and exit status 9, not a traceback a person must read."""
    try:
        asyncio.run(main())
    except ConfigurationError as err:
        log.error("worker_misconfigured", code=str(err.code), detail=err.detail)
        raise SystemExit(EXIT_MISCONFIGURED) from None
