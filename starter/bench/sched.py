"""How long the OCR engine ran, and waited for a core, read from the kernel.

The engine runs in helper processes (``activities.engines.tess_server``, ``rapid_server``),
one per lane, each a child of the process that recognises: the OCR worker in
the pipeline, the benchmark itself for the engine alone. Linux counts, per
task, the nanoseconds it ran on a CPU and the nanoseconds it was runnable but
waited on a run queue (``/proc/PID/schedstat``). Read before and after a run,
they say, inside that one run, how much of the engine's time went to waiting
for a core other processes held: the contention half of the pipeline's
overhead, which comparing two runs on a shared machine cannot resolve.

Elsewhere than Linux the figures are None.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
# The engines' helper processes: Tesseract's and PP-OCRv6's (``rapid_server``).
_HELPERS = (b"activities.engines.tess_server", b"activities.engines.rapid_server")


@dataclass(frozen=True)
class EngineClock:
    """Per helper PID, the (ran, waited) seconds at one instant."""

    helpers: dict[int, tuple[float, float]]

    @classmethod
    def read(cls, parent: int) -> EngineClock | None:
        if not (_PROC / "self" / "schedstat").exists():
            return None
        return cls({pid: stats for pid in helper_pids(parent) if (stats := _schedstat(pid))})

    def since(self, before: EngineClock | None) -> tuple[float, float] | None:
        """(ran, waited) seconds since ``before``; a helper started since counts from zero."""
        if before is None:
            return None
        ran = waited = 0.0
        for pid, (r, w) in self.helpers.items():
            r0, w0 = before.helpers.get(pid, (0.0, 0.0))
            ran, waited = ran + r - r0, waited + w - w0
        return ran, waited


def helper_pids(parent: int) -> list[int]:
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes() if ppid == parent else b""
            if any(helper in cmdline for helper in _HELPERS):
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue  # gone between the listing and the read
    return found


def _schedstat(pid: int) -> tuple[float, float] | None:
    try:
        fields = (_PROC / str(pid) / "schedstat").read_text().split()
        ran_ns, waited_ns = int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None
    return ran_ns / 1e9, waited_ns / 1e9


class EngineWatch:
    """When the engine first and last ran during a block: its helpers' run time, sampled.

    The stream's first page cannot start before one document has been submitted,
    staged, validated and rasterised, and its end waits for the last one's
    check and publish: latency at the two ends of a burst, not cost per page.
    Sampling the helpers' run time every ``every_s`` finds where the engine's
    busy span starts and ends (to within ``every_s``), so the per-page
    overhead can be told apart from those two ends.
    """

    def __init__(self, parent: int, every_s: float = 0.01) -> None:
        self._parent = parent
        self._every_s = every_s
        self._task: asyncio.Task[None] | None = None
        self.first: float | None = None  # time.perf_counter() of the first sample that ran
        self.last: float | None = None  # ... and of the last

    async def __aenter__(self) -> EngineWatch:
        self._task = asyncio.create_task(self._sample())
        await asyncio.sleep(0)  # the baseline sample is taken before the block runs
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.sleep(2 * self._every_s)  # a last sample after the block
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _sample(self) -> None:
        clock = EngineClock.read(self._parent)
        if clock is None:
            return
        pids, ran = list(clock.helpers), _ran(clock)
        while True:
            await asyncio.sleep(self._every_s)
            now = time.perf_counter()
            stats = [_schedstat(pid) for pid in pids] if pids else []
            if not pids or None in stats:  # a helper (re)started: look again
                fresh = EngineClock.read(self._parent)
                pids = list(fresh.helpers) if fresh else []
                stats = list(fresh.helpers.values()) if fresh else []
            total = sum(s[0] for s in stats if s)
            if total > ran:
                self.first = self.first or now
                self.last = now
            ran = total


def _ran(clock: EngineClock) -> float:
    return sum(ran for ran, _ in clock.helpers.values())
