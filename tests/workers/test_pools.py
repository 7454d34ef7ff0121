"""Live pool limits: a running worker's activity concurrency follows ``custody pools set``."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from uuid import uuid4

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

from custody.state.pools import MAX_LIMIT, read_limits, set_limit
from custody.stores.local import LocalStore
from starter.cli.pools import register  # noqa: F401  (the CLI module imports cleanly)
from tests.helpers import make_settings
from workers.slots import ACTIVITY_POLLERS, live_tuner, pool_supplier


class Gauge:
    """Counts activities running at once, as each one starts."""

    def __init__(self) -> None:
        self.now = 0
        self.starts: list[int] = []  # how many ran, this one included, as each started
        self._lock = threading.Lock()

    def hold(self, seconds: float) -> None:
        with self._lock:
            self.now += 1
            self.starts.append(self.now)
        try:
            time.sleep(seconds)
        finally:
            with self._lock:
                self.now -= 1


GAUGE = Gauge()


# A stand-in activity: it only measures concurrency; the slots under test are real.
@activity.defn(name="hold")
def hold(seconds: float) -> None:
    GAUGE.hold(seconds)


@workflow.defn(name="PoolBurst", sandboxed=False)
class PoolBurst:
    @workflow.run
    async def run(self, n: int) -> None:
        await asyncio.gather(
            *(
                workflow.execute_activity(hold, 0.8, start_to_close_timeout=timedelta(seconds=60))
                for _ in range(n)
            )
        )


async def _burst(client: Client, queue: str, n: int) -> list[int]:
    GAUGE.starts = []
    await client.execute_workflow(PoolBurst.run, n, id=f"burst-{uuid4().hex}", task_queue=queue)
    return GAUGE.starts


async def test_pool_limit_changes_running_worker_concurrency(
    tmp_path: Path, temporal_client: Client, temporal_address: str
) -> None:
    """Lowering the OCR pool's limit drops a running worker's concurrency; raising it lifts it."""
    settings = make_settings(
        tmp_path, temporal_address, ocr_concurrency=2, ocr_prefetch=1, pool_refresh_s=0.2
    )
    store = LocalStore(settings.objects_dir)
    supplier = pool_supplier(settings, store, "ocr")
    queue = settings.ocr_task_queue
    worker = Worker(
        temporal_client,
        task_queue=queue,
        workflows=[PoolBurst],
        activities=[hold],
        activity_executor=ThreadPoolExecutor(MAX_LIMIT),
        tuner=live_tuner(supplier),
        activity_task_poller_behavior=ACTIVITY_POLLERS,
    )
    async with worker:
        # The configured default: two engine lanes plus one document staged ahead.
        assert max(await _burst(temporal_client, queue, 6)) == 3
        set_limit(store, "ocr", 1)
        await asyncio.sleep(0.5)
        starts = await _burst(temporal_client, queue, 6)
        # The permits the idle poller already held (two) may start before the
        # lower limit bites; from then on one runs at a time.
        assert max(starts) <= 2 and starts[2:] == [1] * 4
        set_limit(store, "ocr", 5)
        await asyncio.sleep(0.5)
        assert max(await _burst(temporal_client, queue, 10)) == 5
        assert supplier.limit == 5
        set_limit(store, "ocr", None)  # reset: back to the default, live
        await asyncio.sleep(0.5)
        assert max(await _burst(temporal_client, queue, 6)) == 3
    assert read_limits(store) == {}


def test_pool_limits_validated_and_per_pool(tmp_path: Path) -> None:
    """A limit outside 1..MAX_LIMIT or for an unknown pool is refused; pools are independent."""
    store = LocalStore(tmp_path)
    assert set_limit(store, "io", 4) == {"io": 4}
    assert set_limit(store, "ocr", 2) == {"io": 4, "ocr": 2}
    for bad in (0, MAX_LIMIT + 1):
        try:
            set_limit(store, "ocr", bad)
        except ValueError:
            continue
        raise AssertionError(f"limit {bad} accepted")
    assert read_limits(store) == {"io": 4, "ocr": 2}
