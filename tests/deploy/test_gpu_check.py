"""``scripts/gpu-check.sh``, the prepared device check of issue #32, end to end on this CPU box.

The real script, the real command line and engines, on one corpus document and
one pass: without a CUDA provider it must fall back to ``--device cpu`` and
still write every file a GPU run writes, so the first run on a GPU machine
is not its first run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from activities.engines.rapid_models import cuda_available

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real benches, minutes

_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(cuda_available(), reason="this box has CUDA: the CPU fallback cannot show")
def test_gpu_check_runs_end_to_end_and_falls_back_to_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "PYTHON": sys.executable, "WHEELS": str(tmp_path)}
    env |= {"PASSES": "1", "LIMIT": "1", "CUSTODY_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        ["bash", str(_ROOT / "scripts" / "gpu-check.sh")],
        cwd=_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, (proc.stderr + (out / "gpu_bench.err").read_text())[-2000:]
    assert "falling back" in proc.stderr or "no CUDA provider" in proc.stderr
    found = json.loads((out / "gpu_bench.json").read_text())
    assert found["device"] == "cpu" and found["documents"] == 1
    assert {"in_flight_1", "in_flight_2", "in_flight_4"} <= set(found["gpu"])
    assert found["f1_delta_max"] <= 0.002 and found["gpu"]["profile"]["onnxruntime"]
    assert "skipped" in (out / "gpu_tests.txt").read_text()
    assert "CPUExecutionProvider" in (out / "onnxruntime.txt").read_text()
