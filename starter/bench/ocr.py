"""OCR speed and accuracy: bare EasyOCR, RapidOCR, Tesseract, Custody's OCR stage, the pipeline.

Every engine sees the same 8-bit page images (``activities.pages.raster``, PDFs at the
policy's dpi), engines interleaved document by document so that a noisy
neighbour on the CPU hits all of them alike. Rasterising is outside the timed
region except for ``pipeline``: submit -> published on a real stack, as
deployed (``starter.bench.pipeline``), one document alone and then a stream.
Totals sum pages and seconds; CER and word F1 are unweighted means over
documents (``starter.bench.report``). Bare engines run as a user runs them, a
page at a time with the library's own threads; Custody's engine as a worker
runs it, in lanes (``--lanes``, one per core): its row reads a page at a time,
and its speed for the targets (``throughput``) is a pass over every page of
the corpus, ``lanes`` at a time.

Beside the corpus, degraded variants of a few of its documents
(``starter.bench.variants``), reported as classes; per class, issue #14's
targets and the confidence bands (``starter.bench.targets``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from activities.engines.base import OcrEngine
from activities.engines.selection import build_engine, give_cores
from activities.pages.raster import GrayPage, iter_pages
from custody import cpus
from custody.errors import Code
from custody.settings import Settings
from starter.bench import bare, targets, variants
from starter.bench import pipeline as bench_pipeline
from starter.bench.bare import Recogniser
from starter.bench.degrade import KINDS
from starter.bench.pipeline import Pipeline
from starter.bench.report import Figures, figures, plot, ratios_of, speed, table, totals_of
from starter.cli.output import Exit, emit, fail
from starter.client.connect import CustodyClient

_MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".pdf": "application/pdf",
}


@dataclass(frozen=True)
class Degrading:
    """Which degraded variants to read: ``docs`` documents, each as every kind, seeded."""

    docs: int
    kinds: tuple[str, ...] = KINDS
    seed: int = 0


def default_corpus() -> Path:
    root = os.environ.get("CUSTODY_CORPUS")
    if root:
        return Path(root) / "ocr_gt"
    return Path(__file__).resolve().parents[3] / "shared" / "corpus" / "ocr_gt"


def documents(corpus: Path, limit: int | None) -> list[Path]:
    """Scans of a known type with a same-stem ground truth, sorted by name."""
    found = sorted(
        p
        for p in corpus.iterdir()
        if p.suffix.lower() in _MEDIA_TYPES and p.with_suffix(".txt").is_file()
    )
    return found[:limit] if limit is not None else found


def run(args: argparse.Namespace, settings: Settings) -> int:
    corpus = args.corpus or default_corpus()
    docs = documents(corpus, args.limit) if corpus.is_dir() else []
    if not docs:
        return fail(args.json, Code.USAGE, f"no scans with ground truth under {corpus}", Exit.USAGE)
    if args.device is not None:  # the batched engine in process (starter.bench.device)
        from starter.bench import device

        return device.run(args, settings, docs)
    # torch's notices about CPU-only pinning and quantisation: noise here.
    warnings.filterwarnings("ignore", message=".*(pin_memory|quantiz).*")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    degrading = Degrading(args.degrade_docs, tuple(args.degradations), args.seed)
    lanes = args.lanes or _cores()
    bench = _bench(docs, list(args.engines), settings, args.stream_rounds, degrading, lanes)
    results = asyncio.run(bench)
    results["corpus"] = str(corpus)
    emit(args, results, "\n".join([table(results), *targets.lines(results)]))
    if args.plot:
        plot(results, args.plot)
    return Exit.OK


async def _bench(
    docs: list[Path],
    engines: list[str],
    settings: Settings,
    rounds: int,
    degrading: Degrading,
    lanes: int,
) -> Figures:
    started = time.perf_counter()
    # Built as workers/ocr.py builds it; models load and hash before any timing.
    custody = build_engine(settings)
    # Custody's row: the engine a worker with ``lanes`` lanes builds (a thread per
    # lane when there is a core per lane), pages read one at a time for the row
    # and then ``lanes`` at a time for its throughput.
    in_lanes = custody
    if lanes != settings.ocr_concurrency:
        in_lanes = build_engine(settings.model_copy(update={"ocr_concurrency": lanes}))
    recognisers = _recognisers(engines, in_lanes)
    load_s = time.perf_counter() - started
    dpi = settings.limits.ocr_dpi
    rows: list[Figures] = []
    stream: Figures | None = None
    async with _stack(settings, "pipeline" in engines) as pipeline:
        client = pipeline.client if pipeline else None
        for n, path in enumerate(docs, 1):
            print(f"bench ocr: document {n}/{len(docs)}", file=sys.stderr, flush=True)
            rows.append(await _document(path, recognisers, client, dpi))
        extra = await _degraded(docs, degrading, recognisers, dpi)
        streaming = pipeline is not None and rounds > 0
        # Every page of the corpus, rasterised once for the lanes pass and the stream's
        # engine, and only when one of them runs.
        corpus_pages = []
        if "custody" in engines or streaming:
            corpus_pages = [image for p in docs for _, image in _pages(p, dpi)]
        throughput = None
        if "custody" in engines:
            print(f"bench ocr: custody in {lanes} lane(s)", file=sys.stderr, flush=True)
            throughput = await asyncio.to_thread(_throughput, in_lanes, corpus_pages, lanes)
        if pipeline is not None and streaming:
            print(f"bench ocr: stream, {rounds} round(s)", file=sys.stderr, flush=True)
            _engine_cores(custody, settings)
            engine_pass = _engine_pass(custody, corpus_pages, settings.ocr_concurrency)
            stream = await bench_pipeline.stream(
                pipeline, docs, engine_pass, rounds, settings.ocr_concurrency
            )
    totals = {e: totals_of([r["engines"][e] for r in rows]) for e in engines}
    if throughput is not None:
        totals["custody"]["throughput"] = throughput
    if "pipeline" in totals:
        outside = [r["engines"]["pipeline"].get("outside_ocr_seconds") for r in rows]
        known = sorted(x for x in outside if x is not None)
        totals["pipeline"]["outside_ocr_seconds_median"] = known[len(known) // 2] if known else None
    ratios = ratios_of(totals)
    if stream is not None:
        ratios["pipeline_stream_overhead_share"] = stream["overhead_share_median"]
        ratios["pipeline_stream_engine_idle_share"] = stream["engine_idle_share_median"]
        ratios["pipeline_stream_cpu_wait_share"] = stream["engine_cpu_wait_share_median"]
        ratios["pipeline_stream_overhead_share_in_run"] = stream["overhead_share_in_run_median"]
        ratios["pipeline_stream_overhead_share_steady"] = stream["overhead_share_steady_median"]
    classes = targets.classes_of(rows + extra["degraded"], engines)
    steady = ratios.get("pipeline_stream_overhead_share_steady")
    floor, review = settings.confidence_floor, settings.confidence_review
    return {
        "engines": totals,
        "documents": rows,
        "pipeline_stream": stream,
        "ratios": ratios,
        "custody_engine": {"name": custody.name, "version": custody.version},
        "custody_params": custody.params(),
        "custody_model_hashes": custody.model_hashes(),
        "model_load_seconds": round(load_s, 2),
        "cpus": os.cpu_count(),
        **extra,
        "classes": classes,
        "targets": targets.targets(totals, classes, steady),
        "calibration": targets.calibration(rows + extra["degraded"], floor, review),
    }


async def _degraded(
    docs: list[Path], degrading: Degrading, recognisers: dict[str, Recogniser], dpi: int
) -> Figures:
    """The degraded rows and, when Custody's engine reads skewed pages, the deskew check."""
    picked = variants.pick(docs, degrading.docs, degrading.seed)
    kinds = list(degrading.kinds)

    def pages(path: Path) -> list[GrayPage]:
        return [image for _, image in _pages(path, dpi)]

    rows = await variants.degraded(picked, kinds, degrading.seed, recognisers, pages)
    check = None
    if picked and "skew" in kinds and "custody" in recognisers:
        print("bench ocr: deskew check", file=sys.stderr, flush=True)
        check = await variants.deskew_check(picked, degrading.seed, recognisers["custody"], pages)
    setup = {"seed": degrading.seed, "kinds": kinds, "documents": [p.name for p in picked]}
    return {"degraded": rows, "degrade": setup, "deskew": check}


@asynccontextmanager
async def _stack(settings: Settings, wanted: bool) -> AsyncIterator[Pipeline | None]:
    if not wanted:
        yield None
        return
    async with bench_pipeline.pipeline_stack(settings) as pipeline:
        yield pipeline


def _engine_cores(engine: OcrEngine, settings: Settings) -> None:
    """For the stream, the engine alone gets the cores the OCR worker's engine gets.

    Only from here on: the per-document comparison above runs bare EasyOCR and
    Tesseract with every core, as a user would run them.
    """
    plan = settings.cpu_plan()
    if plan is not None and give_cores(engine, plan):
        cpus.confine(plan)


def _cores() -> int:
    """The CPUs this process may run on: one lane per core by default."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _throughput(engine: OcrEngine, pages: list[GrayPage], lanes: int) -> Figures:
    """Custody's pages per minute as a worker with ``lanes`` lanes reads: every page of the
    corpus, ``lanes`` at a time, each lane's helper started before the clock."""
    with ThreadPoolExecutor(lanes) as pool:
        list(pool.map(engine.recognise, pages[:lanes], range(lanes)))
    seconds = _engine_pass(engine, pages, lanes)()
    return speed(len(pages), seconds) | {"lanes": lanes, "threads_per_lane": _threads(engine)}


def _threads(engine: OcrEngine) -> int | None:
    params = engine.params()
    threads = params.get("intra_op_threads", params.get("threads"))
    return threads if isinstance(threads, int) else None


def _engine_pass(engine: OcrEngine, pages: list[GrayPage], lanes: int) -> Callable[[], float]:
    """Seconds for Custody's engine to read every page, ``lanes`` at once."""

    def run() -> float:
        started = time.perf_counter()
        with ThreadPoolExecutor(lanes) as pool:
            list(pool.map(engine.recognise, pages, range(len(pages))))
        return time.perf_counter() - started

    return run


async def _document(
    path: Path, recognisers: dict[str, Recogniser], client: CustodyClient | None, dpi: int
) -> Figures:
    truth = path.with_suffix(".txt").read_text(encoding="utf-8")
    pages = [image for _, image in _pages(path, dpi)]
    by_engine: dict[str, Figures] = {}
    for name, recognise in recognisers.items():
        by_engine[name] = await asyncio.to_thread(variants.run_scored, recognise, pages, truth)
    if client is not None:
        seconds, text, extra = await bench_pipeline.alone(client, path)
        by_engine["pipeline"] = figures(len(pages), seconds, text, truth) | extra
    row = {"document": path.name, "pages": len(pages), "engines": by_engine}
    return row | {"class": variants.class_of(path)}


def _pages(path: Path, dpi: int) -> Iterator[tuple[int, GrayPage]]:
    return iter_pages(path, _MEDIA_TYPES[path.suffix.lower()], dpi)


def _recognisers(engines: list[str], custody: OcrEngine) -> dict[str, Recogniser]:
    found: dict[str, Recogniser] = {}
    if "easyocr_default" in engines:
        found["easyocr_default"] = bare.easyocr_default()
    if "rapidocr_default" in engines:
        found["rapidocr_default"] = bare.rapidocr_default()
    if "tesseract" in engines:
        found["tesseract"] = bare.tesseract
    if "custody" in engines:
        found["custody"] = bare.custody(custody)
    return found
