"""``custody bench KIND``: benchmarks that report ratios measured side by side in one run.

Each kind's arguments are declared here; its module (``starter.bench.KIND``,
exposing ``run(args, settings) -> int``) is imported only when that kind runs,
so ``custody bench ocr`` never needs the HTTP client ``bench intake`` drives.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custody.extras import require
from custody.settings import Settings
from starter.bench import DEGRADATIONS, ENGINES
from starter.cli.registry import Handler, add_command, load, supervised


def _some_of(
    parser: argparse.ArgumentParser, flag: str, choices: tuple[str, ...], text: str
) -> None:
    """An option naming one or more of ``choices``, all of them by default."""
    parser.add_argument(
        flag, nargs="+", choices=choices, default=list(choices), help=f"{text} (default: all)"
    )


def _one_of(
    parser: argparse._ActionsContainer, flag: str, choices: tuple[str, ...], text: str
) -> None:
    """An option naming one of ``choices``, the first by default."""
    parser.add_argument(
        flag, choices=choices, default=choices[0], help=f"{text} (default: {choices[0]})"
    )


def _ocr(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", type=Path, default=None, help="scans with same-stem .txt")
    parser.add_argument("--limit", type=int, default=None, help="first N documents, sorted")
    _some_of(parser, "--engines", ENGINES, "the engines to read the corpus with, side by side")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG of the figures")
    parser.add_argument(
        "--stream-rounds", type=int, default=3, help="stream rounds, each beside the engine"
    )
    parser.add_argument("--degrade-docs", type=int, default=6, help="documents to degrade, 0: none")
    _some_of(parser, "--degradations", DEGRADATIONS, "how to degrade those documents")
    parser.add_argument("--seed", type=int, default=0, help="seed of the degraded variants")
    parser.add_argument(
        "--lanes",
        type=int,
        default=None,
        help="engine lanes for Custody's throughput (default: one per core)",
    )
    _device(parser.add_argument_group("batched engine in process (--device; no Temporal)"))


def _device(group: argparse._ArgumentGroup) -> None:
    """``--device`` and its options: ``starter.bench.device``."""
    group.add_argument(
        "--device", choices=("cpu", "cuda"), default=None, help="the batched engine on this device"
    )
    group.add_argument(
        "--in-flight", type=int, nargs="+", default=[1, 2, 4], help="documents read at once"
    )
    group.add_argument("--passes", type=int, default=5, help="timed passes after start-up")
    group.add_argument("--batch-pages", type=int, default=16, help="pages per detector call")
    group.add_argument("--streams", type=int, default=0, help="helpers (0: 4 on CUDA, else 1)")
    group.add_argument(
        "--line-px", type=int, default=1, help="recogniser call width step (1: exact widths)"
    )
    group.add_argument(
        "--iobinding", action=argparse.BooleanOptionalAction, default=True, help="CTC head"
    )
    group.add_argument("--cuda-graphs", action="store_true", help="replay the detector")
    _one_of(
        group,
        "--gpu-provider",
        ("cuda", "tensorrt"),
        "with --device cuda: onnxruntime's CUDA or TensorRT execution provider",
    )
    group.add_argument(
        "--profile-dir", type=Path, default=None, help="onnxruntime's profiler writes here"
    )


def _intake(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", type=int, default=300, help="documents in the burst")
    parser.add_argument("--rate", type=float, default=200.0, help="arrivals per second")
    parser.add_argument("--sources", type=int, default=4, help="distinct source ids")
    parser.add_argument("--max-waiting", type=int, default=100, help="admission bound")
    parser.add_argument("--big-mb", type=int, default=1024, help="size of the large upload")
    parser.add_argument("--drain", action="store_true", help="run the I/O and OCR workers too")
    parser.add_argument("--slo", type=float, default=None, help="intake SLO, s (default: setting)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds, all in")


def _egress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", type=Path, default=None, help="scans to publish and release")
    parser.add_argument("--limit", type=int, default=3, help="first N documents, sorted")
    parser.add_argument("--mark-pages", type=int, default=2, help="pages for the mark measure")


def _abuse(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the abuse lasts")
    parser.add_argument("--slow", type=int, default=16, help="slow-upload connections")
    parser.add_argument("--flood", type=int, default=400, help="tiny uploads at most")
    parser.add_argument("--big-headers", type=int, default=20, help="oversized heads at most")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds, all in")


def _preview(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--page", type=Path, default=None, help="one-page scan (default: corpus)")
    parser.add_argument("--requests", type=int, default=8, help="previews sent per concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4], help="clients")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds, all in")


def _scale(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", type=Path, default=None, help="scans (default: the corpus)")
    parser.add_argument("--docs", type=int, default=6, help="first N documents, sorted")
    parser.add_argument("--workers", type=int, default=2, help="OCR worker processes, at most")


def _fairness(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--b-docs", type=int, default=5, help="tenant B's documents")
    parser.add_argument("--ratio", type=int, default=10, help="A submits this many times B's")
    _one_of(parser, "--engine", ("tesseract", "rapidocr"), "the OCR engine the workers run")
    parser.add_argument("--io-slots", type=int, default=2, help="I/O worker slots (cores)")
    parser.add_argument(
        "--compare-off", action="store_true", help="run the contended phase without fairness too"
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds, all in")


def _fields(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", type=Path, default=None, help="scans with ground truth")
    parser.add_argument("--limit", type=int, default=None, help="first N documents, sorted")
    parser.add_argument(
        "--referrals", type=int, default=20, help="synthetic referrals when the corpus has none"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic referrals")


def _redaction(parser: argparse.ArgumentParser) -> None:
    _fields(parser)
    parser.add_argument("--policy", default="default", help="redaction policy: a name or JSON file")
    parser.add_argument(
        "--born-digital", type=int, default=6, help="born-digital pages per split (dev, held out)"
    )
    parser.add_argument("--sets", default=None, help="comma-separated sets to run (default: all)")
    parser.add_argument(
        "--reader",
        choices=("tesseract", "easyocr"),
        default="tesseract",
        help="the engine of the bench's own search: tesseract (psm 3) or easyocr (a third"
        " family beside the check's two; the easyocr extra)",
    )


def _ledger(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=10_000, help="events the log grows to")
    parser.add_argument("--writers", type=int, default=8, help="appending threads")
    _one_of(
        parser,
        "--store",
        ("local", "s3"),
        "the ledger's store: a local folder, or S3 on moto's server",
    )
    parser.add_argument(
        "--s3-latency-ms", type=float, default=0.0, help="with --store s3: delay per request"
    )


#: kind -> (module whose ``run`` runs it, one-line help, its arguments).
BENCHES: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = {
    "ocr": (
        "starter.bench.ocr",
        "OCR speed and accuracy: bare EasyOCR, RapidOCR and Tesseract, Custody's OCR stage, "
        "the pipeline; degraded classes, targets, confidence bands.",
        _ocr,
    ),
    "intake": (
        "starter.bench.intake",
        "Replay a burst of uploads against the HTTP edge on loopback; "
        "report admission side by side.",
        _intake,
    ),
    "fields": (
        "starter.bench.fields",
        "Fields read by the pipeline without the type, against ground truth: exact, "
        "missing, wrong, and wrong values published without review.",
        _fields,
    ),
    "redaction": (
        "starter.bench.redaction",
        "Redacted views of referrals, receipts and born-digital pages, searched by an OCR pass "
        "of the bench's own for every true identifier: views, refused, refused_clean, leaks.",
        _redaction,
    ),
    "abuse": (
        "starter.bench.abuse",
        "Slow uploads, a flood and oversized heads from one tenant on loopback; "
        "is another tenant still accepted within 2 s?",
        _abuse,
    ),
    "preview": (
        "starter.bench.preview",
        "POST /v1/preview on loopback: p50/p95 latency of one page at each concurrency, "
        "429s apart.",
        _preview,
    ),
    "scale": (
        "starter.bench.scale",
        "1, then 2, OCR worker processes on one dev server: pages per minute, queue age, "
        "where the time goes.",
        _scale,
    ),
    "fairness": (
        "starter.bench.fairness",
        "Tenant B's admission-to-OCR-start alone and behind tenant A's 10x burst (fair queues).",
        _fairness,
    ),
    "ledger": (
        "starter.bench.ledger",
        "The audit ledger at volume: appends per second, objects per event, one document's "
        "proof (reads, seconds) and the incremental audit at N/1000 .. N.",
        _ledger,
    ),
    "egress": (
        "starter.bench.egress",
        "Egress speed: pages per minute of render + watermark + C2PA, and a release's overhead.",
        _egress,
    ),
}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    bench = add_command(sub, "bench")
    kinds = bench.add_subparsers(dest="bench_kind", required=True)
    for kind, (module, text, arguments) in BENCHES.items():
        parser = kinds.add_parser(kind, parents=[common], help=text)
        arguments(parser)
        parser.set_defaults(handler=supervised(_runner(module, f"bench {kind}")))


def _runner(module: str, command: str) -> Handler:
    def run(args: argparse.Namespace, settings: Settings) -> int:
        require("bench", f"custody {command}")  # every kind, before any process starts
        code: int = load(module, command).run(args, settings)
        return code

    return run
