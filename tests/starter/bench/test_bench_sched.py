"""The engine clock: a Tesseract helper's ran and waited seconds, read from /proc."""

from __future__ import annotations

import os

import numpy as np
import pytest

from activities.engines.tess_server import TesseractHelper
from activities.engines.tesseract import tesseract_info
from starter.bench.sched import EngineClock

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/schedstat"), reason="the kernel's schedstat is Linux's"
)


def test_engine_clock_counts_only_this_process_helpers_and_their_pages() -> None:
    """A helper started after ``before`` counts from zero; a page adds to its run time."""
    before = EngineClock.read(os.getpid())
    assert before is not None  # other tests' idle helpers may be in it: they add nothing
    _, tessdata = tesseract_info()
    helper = TesseractHelper(str(tessdata), "eng", 3, 3)
    try:
        helper.start()
        started = EngineClock.read(os.getpid())
        assert started is not None and helper._proc is not None
        assert set(started.helpers) - set(before.helpers) == {helper._proc.pid}
        page = np.full((400, 600), 255, dtype=np.uint8)
        page[180:220, 50:550] = 0  # a bar, so layout analysis has work
        helper.tsv(page, 60.0)
        after = EngineClock.read(os.getpid())
        assert after is not None
        loaded = started.since(before)
        read = after.since(started)
        assert loaded is not None and read is not None
        assert loaded[0] > 0 and read[0] > 0  # loading the model, then reading a page
        total = after.since(before)
        assert total == pytest.approx((loaded[0] + read[0], loaded[1] + read[1]))
        assert EngineClock.read(os.getppid()) == EngineClock({})  # no helpers of its own
        assert after.since(None) is None
    finally:
        helper.close()
