"""``custody bench ocr --device``: the batched engine in process, on a two-page corpus slice.

Real engines and real helper processes, through the real command line; no
Temporal. ``--device cuda`` on a box without onnxruntime's CUDA provider must
answer a coded error, not a traceback; on a GPU box it measures (skipped here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from activities.engines.rapid_models import cuda_available

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real benches, minutes

_SLICE = ("funsd_82251504.png", "tess_phototest.tif")  # one page each


def _slice(corpus: Path, root: Path) -> Path:
    scans = root / "ocr_gt"
    scans.mkdir()
    for name in _SLICE:
        shutil.copy(corpus / "ocr_gt" / name, scans / name)
        shutil.copy(corpus / "ocr_gt" / Path(name).with_suffix(".txt"), scans)
    return scans


def _bench(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starter.cli.main", "bench", "ocr", "--json", *args],
        env={**os.environ, "CUSTODY_HOME": str(root / "home")},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def on_cpu(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the batched engine on the CPU provider beside two CPU lanes."""
    root = tmp_path_factory.mktemp("device")
    scans = _slice(corpus, root)
    args = ["--corpus", str(scans), "--device", "cpu", "--lanes", "2", "--passes", "1"]
    args += ["--in-flight", "1", "2", "--batch-pages", "4", "--profile-dir", str(root / "prof")]
    proc = _bench(root, *args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def test_device_bench_reports_the_contracted_keys(on_cpu: dict[str, Any]) -> None:
    """``gpu.in_flight_N.pages_per_minute`` beside ``cpu_lanes``, ``ratio``, ``f1_delta_max``."""
    gpu, cpu = on_cpu["gpu"], on_cpu["cpu_lanes"]
    assert on_cpu["device"] == "cpu" and on_cpu["pages"] == 2
    assert gpu["in_flight_1"]["pages_per_minute"] > 0 and gpu["in_flight_2"]["passes"] == 1
    assert cpu["lanes"] == 2 and cpu["pages_per_minute"] > 0
    assert on_cpu["ratio"] == pytest.approx(
        max(gpu["in_flight_1"]["pages_per_minute"], gpu["in_flight_2"]["pages_per_minute"])
        / cpu["pages_per_minute"],
        abs=0.002,
    )
    assert gpu["startup_seconds"] > 0 and gpu["params"]["provider"] == "cpu"


def test_device_bench_on_the_cpu_reads_as_the_lanes(on_cpu: dict[str, Any]) -> None:
    """The batched engine's text equals the lane engine's on every page (F1 delta 0)."""
    assert on_cpu["f1_delta_max"] <= 0.002
    assert on_cpu["text_identical_pages"] == on_cpu["pages"]


def test_device_bench_profiles_every_stage(on_cpu: dict[str, Any]) -> None:
    """Seconds per page in each helper stage, and onnxruntime's own profile per model."""
    profile = on_cpu["gpu"]["profile"]
    stages = profile["seconds_per_page"]
    assert {"det_pre", "det_model", "det_post", "crop", "rec_model", "boxes"} <= set(stages)
    assert all(v >= 0 for v in stages.values())
    assert profile["onnxruntime"] and isinstance(profile["onnxruntime"][0], dict)


@pytest.mark.skipif(cuda_available(), reason="this box has CUDA: the refusal cannot show")
def test_device_cuda_without_cuda_answers_a_coded_error(corpus: Path, tmp_path: Path) -> None:
    """No CUDA provider: exit 9 and the CONFIGURATION code, no traceback."""
    proc = _bench(tmp_path, "--corpus", str(_slice(corpus, tmp_path)), "--device", "cuda")
    assert proc.returncode == 9
    assert "CONFIGURATION" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.skipif(not cuda_available(), reason="needs onnxruntime's CUDA provider and a GPU")
def test_device_cuda_measures_beside_the_cpu_lanes(corpus: Path, tmp_path: Path) -> None:
    """On a GPU box: every in-flight count measured, the text within 0.002 F1 of the CPU's."""
    proc = _bench(
        tmp_path, "--corpus", str(_slice(corpus, tmp_path)), "--device", "cuda", "--passes", "1"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(proc.stdout)
    assert set(found["gpu"]) >= {"in_flight_1", "in_flight_2", "in_flight_4"}
    assert found["f1_delta_max"] <= 0.002 and found["gpu"]["params"]["device"] == "cuda"
