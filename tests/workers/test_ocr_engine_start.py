"""The OCR worker's start with the default engine: cores, threads, device and record.

Real rapidocr helpers; the CPU plan is the one ``workers.ocr.main`` makes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.engines.rapid import RapidOcrEngine
from activities.engines.selection import configured_engine, describe, give_cores
from custody.settings import Settings
from custody.state.ocr_config import ConfigRegistry
from custody.stores.local import LocalStore


def test_default_engine_is_rapidocr_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without settings, the worker runs PP-OCRv6 and picks its device by itself."""
    for name in ("CUSTODY_OCR_ENGINE", "CUSTODY_OCR_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.ocr_engine == "rapidocr" and settings.ocr_device == "auto"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs a core to give the engine")
def test_worker_start_gives_each_lane_a_core_and_one_thread(tmp_path: Path) -> None:
    """With more cores than lanes, each helper runs alone on its core with one thread."""
    settings = Settings(home=tmp_path, ocr_engine="rapidocr", ocr_device="cpu")
    plan = settings.cpu_plan()
    assert plan is not None and len(plan.engine) == settings.ocr_concurrency
    registry = ConfigRegistry(LocalStore(tmp_path / "objects"))
    engine = configured_engine(settings, registry, "ocr-worker@test")
    assert isinstance(engine, RapidOcrEngine)
    try:
        assert give_cores(engine, plan)
        proc = engine._made[0]._proc
        assert proc is not None and os.sched_getaffinity(proc.pid) == set(plan.engine)
        params = describe(engine).params
        assert params["intra_op_threads"] == 1 and params["device"] == "cpu"
        active = registry.active()
        assert active is not None and active.config == describe(engine)
    finally:
        engine.close()
