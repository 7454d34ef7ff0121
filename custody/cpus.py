"""Cores of the engine's own: which CPUs the engine's helpers run on, and which the rest.

On one box the OCR engine is the bottleneck, and everything else (the Temporal
dev server, the I/O worker, the OCR worker's own threads) is short bursts of
work that land on whatever core is free, often the engine's. Measured inside
a pipeline run on the 2-core dev box, the engine's helper spent 4-7 % of the
stream runnable but waiting for its core; renicing the others did not change
that (docs/ocr-benchmark.md). Giving the engine cores nothing else may use
cut the wait to 0.3-0.5 %.

``CUSTODY_ENGINE_CPUS``:

- ``auto`` (default): with an engine that runs in helper processes (PP-OCR's
  ``rapidocr`` or ``tesseract``), when this process may run on more CPUs than
  the OCR worker has lanes, the last ``lanes`` of them are the engine's, one
  helper each, with one thread; the OCR worker keeps its own threads on the
  others, and ``custody up`` starts the dev server, codec server and I/O
  worker on the others too. Otherwise nothing is pinned.
- ``off``: nothing is pinned.
- a list such as ``3`` or ``2,3``: those CPUs are the engine's.

Linux only (``os.sched_setaffinity``); elsewhere nothing is pinned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

#: Engines whose lanes are helper processes, one per core (activities.engines).
_HELPER_ENGINES = ("rapidocr", "tesseract")


@dataclass(frozen=True)
class CpuPlan:
    engine: tuple[int, ...]  # helper i runs on engine[i % len(engine)]
    rest: frozenset[int]  # everything else on the box

    @property
    def rest_list(self) -> str:
        """``taskset -c`` form."""
        return ",".join(str(cpu) for cpu in sorted(self.rest))


def parse(value: str) -> str:
    """Validate a ``CUSTODY_ENGINE_CPUS`` value; returns it normalised."""
    value = value.strip().lower()
    if value in ("auto", "off"):
        return value
    try:
        cpus = [int(part) for part in value.split(",")]
    except ValueError:
        raise ValueError("CUSTODY_ENGINE_CPUS is 'auto', 'off' or CPU numbers like '2,3'") from None
    if not cpus or min(cpus) < 0 or len(set(cpus)) != len(cpus):
        raise ValueError("CUSTODY_ENGINE_CPUS lists distinct CPU numbers, like '2,3'")
    return ",".join(str(cpu) for cpu in cpus)


def plan(setting: str, lanes: int, engine: str) -> CpuPlan | None:
    """The split for this process's CPUs, or None when the engine gets no cores of its own."""
    if setting == "off" or not hasattr(os, "sched_getaffinity"):
        return None
    available = sorted(os.sched_getaffinity(0))
    if setting == "auto":
        # EasyOCR's threads run inside the worker: only helper processes can be given cores.
        if engine not in _HELPER_ENGINES or len(available) <= lanes:
            return None
        chosen = tuple(available[-lanes:])
    else:
        chosen = tuple(int(cpu) for cpu in setting.split(","))
        if not set(chosen) < set(available):
            raise ValueError(
                f"CUSTODY_ENGINE_CPUS={setting} must leave a CPU of {available} for the rest"
            )
    return CpuPlan(engine=chosen, rest=frozenset(available) - set(chosen))


def confine(plan: CpuPlan | None) -> None:
    """Keep this process's threads, and threads they start later, off the engine's CPUs."""
    if plan is not None:
        _set_threads(plan.rest)


def release(plan: CpuPlan | None) -> None:
    """Undo ``confine``: every CPU of the plan again."""
    if plan is not None:
        _set_threads(plan.rest | set(plan.engine))


def _set_threads(allowed: frozenset[int]) -> None:
    for task in os.listdir("/proc/self/task"):  # affinity is per thread
        try:
            os.sched_setaffinity(int(task), allowed)
        except ProcessLookupError:
            continue  # a thread that ended meanwhile
