"""custody.cpus: which cores the engine's helpers get, and which everything else keeps."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from pydantic import ValidationError

from custody import cpus
from custody.settings import Settings

EVERY = sorted(os.sched_getaffinity(0))


def test_setting_is_auto_off_or_a_cpu_list() -> None:
    """``CUSTODY_ENGINE_CPUS`` is validated when settings load, not when a worker pins."""
    assert Settings().engine_cpus == "auto"
    assert Settings(engine_cpus=" OFF ").engine_cpus == "off"
    assert Settings(engine_cpus="3, 2").engine_cpus == "3,2"
    for bad in ("", "x", "1,1", "-1", "1;2"):
        with pytest.raises(ValidationError, match="CUSTODY_ENGINE_CPUS"):
            Settings(engine_cpus=bad)


def test_auto_gives_the_last_cpus_to_the_engine_lanes() -> None:
    """With more CPUs than lanes, the last ``lanes`` are the engine's; else nothing is pinned."""
    plan = cpus.plan("auto", 1, "tesseract")
    if len(EVERY) < 2:
        assert plan is None
        return
    assert plan is not None and plan.engine == (EVERY[-1],)
    assert plan.rest == frozenset(EVERY[:-1]) and plan.rest_list == ",".join(map(str, EVERY[:-1]))
    assert cpus.plan("auto", len(EVERY), "tesseract") is None  # no core left for the rest
    assert cpus.plan("auto", 1, "easyocr") is None  # EasyOCR runs inside the worker
    assert cpus.plan("auto", 1, "hybrid") is None
    assert cpus.plan("off", 1, "tesseract") is None


def test_explicit_list_must_leave_a_cpu_for_the_rest() -> None:
    """A list names the engine's CPUs; all of them, or one not available, is refused."""
    with pytest.raises(ValueError, match="must leave a CPU"):
        cpus.plan(",".join(map(str, EVERY)), 1, "tesseract")
    with pytest.raises(ValueError, match="must leave a CPU"):
        cpus.plan(str(max(EVERY) + 64), 1, "tesseract")
    if len(EVERY) >= 2:
        plan = cpus.plan(str(EVERY[0]), 1, "easyocr")  # explicit: the operator decided
        assert plan is not None and plan.engine == (EVERY[0],) and EVERY[0] not in plan.rest


@pytest.mark.skipif(len(EVERY) < 2, reason="confining needs a CPU to leave out")
def test_confine_moves_every_thread_and_release_undoes_it() -> None:
    """Threads started before and after ``confine`` keep off the engine's CPUs.

    In a child process, so this test's own process keeps every core.
    """
    script = """
import json, os, threading
from custody import cpus
plan = cpus.plan("auto", 1, "tesseract")
stop = threading.Event()
def seen():
    tasks = os.listdir("/proc/self/task")
    return sorted({tuple(sorted(os.sched_getaffinity(int(t)))) for t in tasks})
early = threading.Thread(target=stop.wait); early.start()
cpus.confine(plan)
late = threading.Thread(target=stop.wait); late.start()
confined = seen()
cpus.release(plan)
released = seen()
stop.set()
print(json.dumps({"confined": confined, "released": released}))
"""
    argv = [sys.executable, "-c", script]
    seen = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    assert seen["confined"] == [EVERY[:-1]]  # main, early and late threads alike
    assert seen["released"] == [EVERY]
