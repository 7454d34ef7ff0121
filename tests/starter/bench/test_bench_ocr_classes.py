"""``custody bench ocr``'s rapidocr_default engine, degraded classes, targets and bands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from activities.pages.raster import iter_pages
from starter.bench import bare
from starter.bench.textmetrics import word_f1

_PHOTO = "tess_phototest.tif"


def test_bench_rapidocr_default_reads_words_on_a_real_page(corpus: Path) -> None:
    """Bare ``RapidOCR()`` reads phototest's words, each with a confidence in [0, 1]."""
    _, page = next(iter(iter_pages(corpus / "ocr_gt" / _PHOTO, "image/tiff", 200)))
    reading = bare.rapidocr_default()(page, 0)
    truth = (corpus / "ocr_gt" / _PHOTO).with_suffix(".txt").read_text(encoding="utf-8")
    assert len(reading.scored) >= 5 and all(0.0 <= c <= 1.0 for _, c in reading.scored)
    assert reading.confidence is not None and reading.confidence > 0.5
    # Measured 2026-11-30: word F1 1.000 on this page.
    assert word_f1(reading.text, truth) >= 0.95


def test_bench_ocr_json_carries_classes_targets_and_bands(corpus: Path, tmp_path: Path) -> None:
    """``--json`` prints one JSON document with degraded classes, targets, bands and deskew."""
    scans = tmp_path / "ocr_gt"
    scans.mkdir()
    for name in (_PHOTO, Path(_PHOTO).with_suffix(".txt").name):
        shutil.copy(corpus / "ocr_gt" / name, scans / name)
    args = ["bench", "ocr", "--corpus", str(scans), "--json", "--stream-rounds", "0"]
    args += ["--engines", "rapidocr_default", "custody", "--degrade-docs", "1"]
    args += ["--degradations", "skew", "stamp"]
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", *args],
        env={**os.environ, "CUSTODY_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)  # raises on anything after the one document
    for key in ("engines", "documents", "ratios", "classes", "targets", "calibration", "deskew"):
        assert key in results
    assert set(results["classes"]) == {"phototest", "skew", "stamp"}
    assert [r["class"] for r in results["degraded"]] == ["skew", "stamp"]
    f1 = results["targets"]["f1_vs_rapidocr_default"]
    assert set(f1["classes"]) == {"phototest", "skew", "stamp"}
    assert isinstance(f1["met"], bool) and f1["corpus"]["ratio"] > 0
    assert results["targets"]["pages_per_minute_vs_rapidocr_default"]["ratio"] > 0
    assert results["targets"]["pages_per_minute_vs_easyocr_default"]["met"] is None
    bands = results["calibration"]["custody"]["bands"]
    assert (
        sum(b["words"] for b in bands) > 0
        and "floor" in results["calibration"]["custody"]["proposed"]
    )
    assert results["deskew"]["skew"]["angle_error_deg_median"] < 1.0
    assert isinstance(results["deskew"]["pays"], bool)
