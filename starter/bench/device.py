"""``custody bench ocr --device cpu|cuda``: the batched engine in process, beside the CPU lanes.

No Temporal and no stack: pages are rasterised first, then read as an OCR
worker reads them. ``cpu_lanes`` is the lane engine (``RapidOcrEngine``) on
this node's CPU, ``--lanes`` pages at a time. ``gpu`` is the batched engine
(``activities.engines.batched``) on ``--device``: for each ``--in-flight`` N,
N documents at once, each a page at a time as its OCR activity would send
them, their pages batched by the one batcher. Start-up (helpers, models,
bucket planning) and a first pass over every page are timed apart; then
``--passes`` timed passes per N. Each figure is pages over the passes' summed
seconds; ``ratio`` is the best N's over the CPU lanes'. ``f1_delta_max`` is the
largest per-document difference in word F1 between the two engines' texts,
and ``profile`` the seconds per page in each stage of the batched engine's
helpers (onnxruntime's own profile too, with ``--profile-dir``).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from activities.engines.base import OcrEngine
from activities.pages.raster import GrayPage, iter_pages
from custody.errors import Code
from custody.settings import Settings
from starter.bench.textmetrics import word_f1
from starter.cli.output import Exit, emit, fail

Docs = dict[str, list[GrayPage]]
Texts = dict[str, list[str]]
_MEDIA = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".tif": "image/tiff"}
_MEDIA |= {".tiff": "image/tiff", ".pdf": "application/pdf"}


def run(args: argparse.Namespace, settings: Settings, docs: list[Path]) -> int:
    """Measure, print the JSON (or a few lines), exit 0; no CUDA for ``cuda``: exit 9."""
    from activities.engines.rapid_models import cuda_available

    if args.device == "cuda" and not cuda_available():
        message = "no CUDA here: onnxruntime offers no CUDAExecutionProvider (onnxruntime-gpu?)"
        return fail(args.json, Code.CONFIGURATION, message, Exit.CONFIG)
    dpi = settings.limits.ocr_dpi
    pages = {p.name: [i for _, i in iter_pages(p, _MEDIA[p.suffix.lower()], dpi)] for p in docs}
    truth = {p.name: p.with_suffix(".txt").read_text(encoding="utf-8") for p in docs}
    lanes = args.lanes or len(os.sched_getaffinity(0))
    results = measure(args, pages, truth, lanes)
    emit(args, results, _lines(results))
    return Exit.OK


def measure(
    args: argparse.Namespace, docs: Docs, truth: dict[str, str], lanes: int
) -> dict[str, Any]:
    """The CPU lanes, then the batched engine at each in-flight count; their texts compared."""
    cpu, cpu_texts = _cpu_lanes(docs, lanes, args.passes)
    gpu, gpu_texts = _batched(args, docs)
    f1 = {
        doc: {
            "cpu": round(word_f1("\n".join(cpu_texts[doc]), truth[doc]), 4),
            "gpu": round(word_f1("\n".join(gpu_texts[doc]), truth[doc]), 4),
        }
        for doc in docs
    }
    best = max(v["pages_per_minute"] for k, v in gpu.items() if k.startswith("in_flight_"))
    return {
        "device": args.device,
        "gpu": gpu,
        "cpu_lanes": cpu,
        "ratio": round(best / cpu["pages_per_minute"], 3) if cpu["pages_per_minute"] else None,
        "f1_delta_max": round(max(abs(v["gpu"] - v["cpu"]) for v in f1.values()), 4),
        "f1": f1,
        "text_identical_pages": sum(
            a == b for d in docs for a, b in zip(cpu_texts[d], gpu_texts[d], strict=True)
        ),
        "documents": len(docs),
        "pages": sum(len(p) for p in docs.values()),
        "cpus": os.cpu_count(),
    }


def _cpu_lanes(docs: Docs, lanes: int, passes: int) -> tuple[dict[str, Any], Texts]:
    """The lane engine, every page of the corpus ``lanes`` at a time, helpers started first."""
    from activities.engines.rapid import RapidOcrEngine

    engine = RapidOcrEngine(1, device="cpu")
    try:
        engine.warm_up()
        jobs = [(doc, n, page) for doc, ps in docs.items() for n, page in enumerate(ps)]
        texts = _pass_pages(engine, jobs, lanes)  # first pass: every lane's helper started
        seconds = [_timed(lambda: _pass_pages(engine, jobs, lanes)) for _ in range(passes)]
    finally:
        engine.close()
    return _speed(len(jobs), seconds) | {"lanes": lanes}, texts


def _batched(args: argparse.Namespace, docs: Docs) -> tuple[dict[str, Any], Texts]:
    """The batched engine on the device: start-up, a first pass, then each in-flight count."""
    started = time.perf_counter()
    engine = _engine(args)
    try:
        engine.warm_up()
        found: dict[str, Any] = {"startup_seconds": round(time.perf_counter() - started, 2)}
        first = time.perf_counter()
        texts = _pass_docs(engine, docs, max(args.in_flight))  # every shape seen once
        found["first_pass_seconds"] = round(time.perf_counter() - first, 2)
        engine.take_stats()
        pages = sum(len(p) for p in docs.values())
        stats = []
        for n in args.in_flight:
            seconds = _passes(engine, docs, n, args.passes)
            stats.append(engine.take_stats())
            found[f"in_flight_{n}"] = _speed(pages, seconds) | {"batches": _sizes(stats[-1])}
        found["profile"] = _profile(stats, engine, args.profile_dir is not None)
        found["params"] = engine.params()
        found["runtime"] = engine.runtimes()[0]
    finally:
        engine.close()
    return found, texts


def _engine(args: argparse.Namespace) -> Any:
    """The batched engine the options describe (not yet started)."""
    from activities.engines.batched.engine import BatchedRapidEngine
    from activities.engines.batched.tuning import BatchTuning

    batch = BatchTuning(
        pages=args.batch_pages,
        streams=args.streams,
        line_px=args.line_px,
        iobinding=args.iobinding,
        cuda_graphs=args.cuda_graphs,
    )
    profile_dir = None
    if args.profile_dir is not None:
        args.profile_dir.mkdir(parents=True, exist_ok=True)
        profile_dir = str(args.profile_dir.resolve())
    return BatchedRapidEngine(
        1, device=args.device, batch=batch, gpu=args.gpu_provider, profile_dir=profile_dir
    )


def _passes(engine: OcrEngine, docs: Docs, in_flight: int, passes: int) -> list[float]:
    return [_timed(lambda: _pass_docs(engine, docs, in_flight)) for _ in range(passes)]


def _pass_docs(engine: OcrEngine, docs: Docs, in_flight: int) -> Texts:
    """Every document read by ``in_flight`` readers, each a document's pages in order."""

    def one(doc: str) -> list[str]:
        return [engine.recognise(page, n).text for n, page in enumerate(docs[doc])]

    with ThreadPoolExecutor(in_flight) as pool:
        return dict(zip(docs, pool.map(one, docs), strict=True))


def _pass_pages(engine: OcrEngine, jobs: list[tuple[str, int, GrayPage]], lanes: int) -> Texts:
    with ThreadPoolExecutor(lanes) as pool:
        read = list(pool.map(lambda job: engine.recognise(job[2], job[1]).text, jobs))
    texts: Texts = {}
    for (doc, _, _), text in zip(jobs, read, strict=True):
        texts.setdefault(doc, []).append(text)
    return texts


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _speed(pages: int, seconds: list[float]) -> dict[str, Any]:
    total = sum(seconds)
    return {
        "pages_per_minute": round(60 * pages * len(seconds) / total, 2) if total else 0.0,
        "passes": len(seconds),
        "pass_seconds": [round(s, 3) for s in seconds],
    }


def _sizes(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: stats[k] for k in ("batches", "pages_per_batch", "sizes")}


def _profile(stats: list[dict[str, Any]], engine: Any, onnxruntime: bool) -> dict[str, Any]:
    """Seconds per page in each helper stage, over every timed pass; onnxruntime's own too."""
    pages = sum(s["pages"] for s in stats) or 1
    seconds: dict[str, float] = {}
    for s in stats:
        for stage, value in s["stage_seconds"].items():
            seconds[stage] = seconds.get(stage, 0.0) + value
    counts: dict[str, int] = {}
    for s in stats:
        for name, value in s["counts"].items():
            counts[name] = counts.get(name, 0) + value
    found = {
        "seconds_per_page": {k: round(v / pages, 4) for k, v in sorted(seconds.items())},
        "per_page": {k: round(v / pages, 2) for k, v in counts.items() if k != "pages"},
    }
    if onnxruntime:
        found["onnxruntime"] = engine.profiles()
    return found


def _lines(results: dict[str, Any]) -> str:
    gpu, cpu = results["gpu"], results["cpu_lanes"]
    rows = [
        f"{k}: {v['pages_per_minute']} pages/min"
        for k, v in gpu.items()
        if k.startswith("in_flight_")
    ]
    rows.append(f"cpu_lanes ({cpu['lanes']}): {cpu['pages_per_minute']} pages/min")
    rows.append(f"ratio {results['ratio']}, f1_delta_max {results['f1_delta_max']}")
    return "\n".join(rows)
