"""``custody bench ocr`` on the smallest slice that proves its JSON: one page, every engine.

The bench runs as a user runs it (the CLI in its own process, a real stack for
the ``pipeline`` column) over one clean page, streamed once: every figure the
JSON carries is there and in range. Accuracy on more pages is the benchmark's
own business (``custody bench ocr``, docs/ocr-benchmark.md), not the suite's.
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

from activities.engines.selection import build_engine
from custody.settings import Settings
from starter.bench import ENGINES
from starter.bench.ocr import documents

_SLICE = ("tess_phototest.tif",)  # one page
Bench = tuple[dict[str, Any], Path]  # the run's JSON and its plot
_FIGURES = ("pages", "seconds", "seconds_per_page", "pages_per_minute", "cer", "word_f1")


@pytest.fixture(scope="module")
def bench(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """One benchmark run over copies of the slice; its JSON and its plot's path."""
    root = tmp_path_factory.mktemp("bench")
    scans = root / "ocr_gt"
    scans.mkdir()
    for name in _SLICE:
        shutil.copy(corpus / "ocr_gt" / name, scans / name)
        shutil.copy(corpus / "ocr_gt" / Path(name).with_suffix(".txt"), scans)
    png = root / "bench.png"
    args = ["bench", "ocr", "--corpus", str(scans), "--limit", "1", "--json", "--plot", str(png)]
    args += ["--stream-rounds", "1", "--degrade-docs", "0"]  # degraded: test_bench_ocr_classes
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", *args],
        env={**os.environ, "CUSTODY_HOME": str(root / "home")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), png


def test_bench_ocr_reports_every_engine_on_the_same_pages(bench: Bench) -> None:
    """Each engine, in total and per document, read every page and scored within [0, 1]."""
    results, _ = bench
    assert set(results["engines"]) == set(ENGINES)
    assert [d["document"] for d in results["documents"]] == sorted(_SLICE)
    rows = [results["engines"][e] for e in ENGINES]
    rows += [d["engines"][e] for d in results["documents"] for e in ENGINES]
    for row in rows:
        assert set(_FIGURES) <= set(row)
        assert 0.0 <= row["cer"] <= 1.0 and 0.0 <= row["word_f1"] <= 1.0
        assert row["seconds"] > 0
    assert all(results["engines"][e]["pages"] == 1 for e in ENGINES)
    assert all(d["engines"]["pipeline"]["state"] == "published" for d in results["documents"])
    # Time outside the OCR activity, from each record's own OCR seconds: positive, and less
    # than the whole document took.
    for d in results["documents"]:
        pipeline = d["engines"]["pipeline"]
        assert 0 < pipeline["outside_ocr_seconds"] < pipeline["seconds"]
    stream = results["pipeline_stream"]
    assert stream["documents"] == stream["published"] == 1 and stream["pages"] == 1
    assert stream["lanes"] == 1 and len(stream["rounds"]) == 1
    for done in stream["rounds"]:
        # Engine seconds come from the published pages themselves: the engine ran,
        # and for no longer than the stream took on its one lane.
        assert 0 < done["engine_seconds"] <= done["seconds"]
        assert 0 <= done["engine_idle_share"] < 1 and done["custody_seconds"] > 0
        # The kernel's count for the engine's helper: it ran, and ran and waited for a
        # core no longer than the stream lasted; the in-run overhead is the two shares.
        assert 0 < done["engine_cpu_seconds"] <= done["seconds"]
        assert done["engine_cpu_seconds"] + done["engine_cpu_wait_seconds"] <= done["seconds"]
        assert 0 <= done["engine_cpu_wait_share"] < 1 and done["custody_cpu_seconds"] > 0
        in_run = done["engine_idle_share"] + done["engine_cpu_wait_share"]
        assert done["overhead_share_in_run"] == pytest.approx(in_run, abs=1e-3)
        # The engine's busy span, sampled: it starts after the first submit and ends
        # before the last document is published; between, the steady shares.
        ends = done["first_page_after_seconds"] + done["after_last_page_seconds"]
        assert done["first_page_after_seconds"] > 0 and done["after_last_page_seconds"] > 0
        assert ends < done["seconds"]
        assert 0 <= done["steady_engine_idle_share"] < 1 and 0 <= done["steady_lane_share"] < 1
        steady = done["steady_engine_idle_share"] + done["steady_cpu_wait_share"]
        steady += done["steady_lane_share"]
        assert done["overhead_share_steady"] == pytest.approx(steady, abs=1e-3)
        assert done["engine_span_seconds"] < done["seconds"]


def test_bench_ocr_custody_reads_phototest_accurately(bench: Bench) -> None:
    """Custody's stage and the pipeline read the clean phototest page near perfectly."""
    results, _ = bench
    photo = next(d for d in results["documents"] if d["document"] == "tess_phototest.tif")
    # Measured 2026-11-29: word F1 1.000, CER 0.007 for both.
    for engine in ("custody", "pipeline"):
        assert photo["engines"][engine]["word_f1"] >= 0.95
        assert photo["engines"][engine]["cer"] <= 0.05


def test_bench_ocr_ratios_and_plot_are_written(bench: Bench) -> None:
    """The speed/accuracy ratios are numbers and ``--plot`` wrote a PNG."""
    results, png = bench
    for base in ("easyocr_default", "tesseract"):
        ratios = results["ratios"][f"custody_vs_{base}"]
        assert ratios["pages_per_minute"] > 0 and ratios["word_f1"] > 0
    assert results["ratios"]["pipeline_over_custody_seconds"] > 0
    # Custody's speed is its lanes pass: one lane per core, every page of the corpus.
    lanes = results["engines"]["custody"]["throughput"]
    assert lanes["lanes"] == len(os.sched_getaffinity(0)) and lanes["pages"] == 1
    assert lanes["pages_per_minute"] > 0 and lanes["threads_per_lane"] >= 1
    assert results["ratios"]["pipeline_stream_overhead_share"] < 1
    assert 0 <= results["ratios"]["pipeline_stream_engine_idle_share"] < 1
    assert 0 <= results["ratios"]["pipeline_stream_cpu_wait_share"] < 1
    assert 0 <= results["ratios"]["pipeline_stream_overhead_share_in_run"] < 1
    assert 0 <= results["ratios"]["pipeline_stream_overhead_share_steady"] < 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_ocr_custody_is_the_engine_workers_build(bench: Bench) -> None:
    """The ``custody`` column ran the engine ``workers/ocr.py`` builds, and says which."""
    results, _ = bench
    engine = build_engine(Settings(), warm=False)  # the factory the OCR worker calls
    assert results["custody_engine"] == {"name": engine.name, "version": engine.version}
    assert results["custody_params"] == engine.params()
    assert results["custody_model_hashes"] == engine.model_hashes()


def test_bench_documents_pair_scans_with_ground_truth(tmp_path: Path) -> None:
    """Only scans with a same-stem .txt are benchmarked, sorted, first N with a limit."""
    for name in ("b.png", "b.txt", "a.pdf", "a.txt", "c.jpg", "notes.txt", "d.gif", "d.txt"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "_annotations").mkdir()
    assert [p.name for p in documents(tmp_path, None)] == ["a.pdf", "b.png"]
    assert [p.name for p in documents(tmp_path, 1)] == ["a.pdf"]
