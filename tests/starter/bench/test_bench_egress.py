"""``custody bench egress`` on one corpus page, as a script runs it: one JSON document out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def test_bench_egress_reports_pages_per_minute_share_and_mark(corpus: Path, tmp_path: Path) -> None:
    """Publishes, builds and releases one page; stdout is the report alone, every figure set."""
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
    report = json.loads(proc.stdout)  # the dev server's banner and worker logs went to stderr
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
