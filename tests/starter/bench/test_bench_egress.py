"""``custody bench egress`` on one corpus page, as a script runs it: one JSON document out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def report(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the bench on the corpus's 1-bit Tesseract test page, its JSON report."""
    tmp_path = tmp_path_factory.mktemp("bench-egress")
    scans = tmp_path / "ocr_gt"
    scans.mkdir()
    for name in ("tess_phototest.tif", "tess_phototest.txt"):
        shutil.copy(corpus / "ocr_gt" / name, scans / name)
    args = ["bench", "egress", "--corpus", str(scans), "--limit", "1", "--mark-pages", "1"]
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", *args, "--json"],
        env={**os.environ, "CUSTODY_HOME": str(tmp_path / "home")},
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    found: dict[str, Any] = json.loads(proc.stdout)  # banners and worker logs went to stderr
    return found


def test_bench_egress_reports_pages_per_minute_share_and_mark(report: dict[str, Any]) -> None:
    """Publishes, builds and releases one page; stdout is the report alone, every figure set."""
    assert report["documents"] == report["pages"] == 1
    assert report["release_state"] == "delivered"
    assert report["pages_per_minute"] > 0 and report["build_seconds"] > 0
    assert 0 < report["render_seconds"] < report["release_seconds"]
    assert 0 < report["share_outside_render"] < 1
    assert set(report["parts"]) == {
        "raster_seconds",
        "render_seconds",
        "watermark_seconds",
        "manifest_seconds",
    }
    assert set(report["release_steps"]) == {"prepare", "render", "record", "deliver", "receipt"}
    assert report["mark"]["pages"] == 1.0 and 0 <= report["mark"]["false_positive_rate"] <= 1
    assert "decode_rate_jpeg_q75" in report["mark"]


def test_bench_egress_reports_size_ratio_readback_and_legibility(report: dict[str, Any]) -> None:
    """The 1-bit scan's signed release weighs under 1.5x its TIFF and its mark reads back."""
    tif = report["files"]["tess_phototest.tif"]
    assert tif["source_bytes"] == 38668  # the corpus file as submitted
    assert tif["size_ratio"] == round(tif["released_bytes"] / tif["source_bytes"], 3)
    assert report["size_ratio"] == tif["size_ratio"] <= 1.5
    assert report["readback_ok"] is tif["readback_ok"] is True
    assert len(tif["legibility"]) == len(tif["legibility_lossless"]) == 1
    assert 0.5 < report["legibility"] <= 1 and 0.5 < report["legibility_lossless"] <= 1
