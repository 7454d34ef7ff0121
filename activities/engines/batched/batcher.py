"""The batcher in the OCR worker's process: pages from many documents, a few batches in flight.

Each OCR activity reads its document a page at a time (``activities.ocr``);
on a batched worker each page is handed here instead of to a lane's helper.
One dispatcher thread per helper process takes the oldest waiting page and
every page queued behind it, up to ``pages`` (waiting ``wait_s`` more for
stragglers if asked), and sends them as one batch. With several helpers, one
batch is read while the next gathers, so under load batches fill by
themselves and alone a page goes at once.

A batch that fails before its deadline (a crash, a library's complaint) is
read again page by page, so one bad page fails alone rather than taking the
other documents' pages with it; a batch that ran out its deadline fails whole.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from activities.engines.batched.server import BatchHelper, PageIn
from activities.engines.rapid_wire import Line
from custody.errors import HelperError

Read = tuple[list[Line], bool]


@dataclass
class _Job:
    page: PageIn
    done: Future[Read] = field(default_factory=Future)


@dataclass
class BatchStats:
    """What the batches were: their sizes and the helpers' seconds per stage, summed."""

    sizes: Counter[int] = field(default_factory=Counter)
    failed: int = 0  # batches that failed as a whole (their pages then read one by one)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, size: int, stages: dict[str, Any]) -> None:
        self.sizes[size] += 1
        for stage, seconds in stages.get("seconds", {}).items():
            self.seconds[stage] += seconds
        for name, count in stages.get("counts", {}).items():
            self.counts[name] += count

    def report(self) -> dict[str, Any]:
        pages = sum(size * n for size, n in self.sizes.items())
        return {
            "batches": sum(self.sizes.values()),
            "pages": pages,
            "pages_per_batch": round(pages / max(sum(self.sizes.values()), 1), 2),
            "sizes": {str(size): n for size, n in sorted(self.sizes.items())},
            "failed": self.failed,
            "stage_seconds": {k: round(v, 3) for k, v in sorted(self.seconds.items())},
            "counts": dict(self.counts),
        }


class Batcher:
    """Pages from any thread, read in batches by ``helpers`` (one dispatcher each)."""

    def __init__(
        self, helpers: list[BatchHelper], pages: int, wait_s: float, timeout_s: Callable[[], float]
    ) -> None:
        self._helpers = helpers
        self._pages = pages
        self._wait_s = wait_s
        self._timeout_s = timeout_s  # read per batch: the engine's page deadline as it is now
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._stats = BatchStats()
        self._threads = [
            threading.Thread(target=self._dispatch, args=(h,), daemon=True, name=f"batch-{i}")
            for i, h in enumerate(helpers)
        ]
        for thread in self._threads:
            thread.start()

    def read(self, page: PageIn) -> Read:
        """The page's lines and whether it was read turned over, once its batch is read."""
        job = _Job(page)
        self._queue.put(job)
        return job.done.result()

    def take_stats(self) -> dict[str, Any]:
        """The batches since the last call, and a fresh count."""
        with self._lock:
            stats, self._stats = self._stats, BatchStats()
        return stats.report()

    def close(self) -> None:
        """Stop the dispatchers after the pages already queued, then the helpers."""
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        for helper in self._helpers:
            helper.close()

    def _dispatch(self, helper: BatchHelper) -> None:
        while (first := self._queue.get()) is not None:
            self._run(helper, [first, *self._gather()])

    def _gather(self) -> list[_Job]:
        """The pages queued behind the first, up to a batch; ``wait_s`` for more, if set."""
        jobs: list[_Job] = []
        deadline = time.monotonic() + self._wait_s
        while len(jobs) + 1 < self._pages:
            try:
                left = deadline - time.monotonic()
                job = self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait()
            except queue.Empty:
                break
            if job is None:  # closing: leave the stop for a dispatcher's next get
                self._queue.put(None)
                break
            jobs.append(job)
        return jobs

    def _run(self, helper: BatchHelper, jobs: list[_Job]) -> None:
        started, timeout_s = time.monotonic(), self._timeout_s()
        try:
            read, stages = helper.read([j.page for j in jobs], timeout_s)
        except Exception as err:  # every caller hears of it; the dispatcher lives on
            lost = err if isinstance(err, HelperError) else HelperError(type(err).__name__)
            with self._lock:
                self._stats.failed += 1
            quick = time.monotonic() - started < timeout_s / 2
            if len(jobs) > 1 and quick:
                for job in jobs:
                    self._run(helper, [job])
                return
            for job in jobs:
                job.done.set_exception(lost)
            return
        with self._lock:
            self._stats.add(len(jobs), stages)
        for job, result in zip(jobs, read, strict=True):
            job.done.set_result(result)
