"""The degraded half of ``custody bench ocr``: corpus pages turned into each degraded class.

``--degrade-docs N`` documents are picked round robin over the corpus's
classes (forms, receipts, ...), in an order shuffled by ``--seed``, so a few
documents still cover every kind of page. Each is degraded as every kind of
``starter.bench.degrade`` and read by every engine run in process (not the
pipeline: it reads files, and these pages exist only here), engines
interleaved per variant as on the corpus.

Deskewing is measured beside it, on Custody's engine only: the same engine
on the skewed pages turned straight first (``starter.bench.deskew``), and
on the picked documents' clean pages turned straight, since a deskew that
helps skewed pages must not cost straight ones. Its seconds count in the
deskewed figures.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from activities.pages.raster import GrayPage
from starter.bench.bare import Reading, Recogniser
from starter.bench.degrade import degrade
from starter.bench.deskew import deskew, estimate_skew
from starter.bench.report import Figures, scored, totals_of

Pages = Callable[[Path], list[GrayPage]]

#: A corpus document's class, from its file name's prefix (MANIFEST.md names them so).
CLASSES = {
    "funsd": "forms",
    "funsdpdf": "forms_pdf",
    "sroie": "receipts",
    "tess": "phototest",
    "unlv": "magazine",
}


def class_of(path: Path) -> str:
    return CLASSES.get(path.name.split("_", 1)[0], "other")


def pick(docs: list[Path], n: int, seed: int) -> list[Path]:
    """``n`` documents, one class after another, each class's order shuffled by ``seed``."""
    by_class: dict[str, list[Path]] = {}
    for path in docs:
        by_class.setdefault(class_of(path), []).append(path)
    shuffler = random.Random(seed)
    queues = [shuffler.sample(paths, len(paths)) for _, paths in sorted(by_class.items())]
    picked: list[Path] = []
    while len(picked) < min(n, len(docs)):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    return sorted(picked)


async def degraded(
    docs: list[Path], kinds: list[str], seed: int, recognisers: dict[str, Recogniser], pages: Pages
) -> list[Figures]:
    """One row per (document, kind): every engine's figures on the degraded pages."""
    rows: list[Figures] = []
    for n, path in enumerate(docs, 1):
        print(f"bench ocr: degraded document {n}/{len(docs)}", file=sys.stderr, flush=True)
        clean = pages(path)
        truth = path.with_suffix(".txt").read_text(encoding="utf-8")
        for kind in kinds:
            done = [degrade(image, kind, seed, f"{path.name}:{i}") for i, image in enumerate(clean)]
            extra = " ".join(d.extra_truth for d in done if d.extra_truth)
            images = [d.image for d in done]
            by_engine = {
                name: await asyncio.to_thread(run_scored, recognise, images, f"{truth}\n{extra}")
                for name, recognise in recognisers.items()
            }
            rows.append(
                {
                    "document": path.name,
                    "class": kind,
                    "pages": len(images),
                    "engines": by_engine,
                    "detail": [d.detail for d in done],
                }
            )
    return rows


def run_scored(recognise: Recogniser, images: list[GrayPage], truth: str) -> Figures:
    seconds, readings = timed(recognise, images)
    return scored(len(images), seconds, readings, truth)


def timed(recognise: Recogniser, images: list[GrayPage]) -> tuple[float, list[Reading]]:
    started = time.perf_counter()
    readings = [recognise(image, index) for index, image in enumerate(images)]
    return time.perf_counter() - started, readings


async def deskew_check(docs: list[Path], seed: int, custody: Recogniser, pages: Pages) -> Figures:
    """Custody's engine with and without deskewing first, on skewed and on clean pages."""
    straightened = _straightened(custody)
    found: Figures = {}
    for label in ("skew", "clean"):
        plain: list[Figures] = []
        turned: list[Figures] = []
        errors: list[float] = []
        for path in docs:
            truth = path.with_suffix(".txt").read_text(encoding="utf-8")
            images = pages(path)
            if label == "skew":
                done = [
                    degrade(im, "skew", seed, f"{path.name}:{i}") for i, im in enumerate(images)
                ]
                images = [d.image for d in done]
                errors += _angle_errors(images, [float(d.detail["angle_deg"]) for d in done])
            plain.append(await asyncio.to_thread(run_scored, custody, images, truth))
            turned.append(await asyncio.to_thread(run_scored, straightened, images, truth))
        found[label] = {
            "custody": totals_of(plain),
            "custody_deskewed": totals_of(turned),
            "word_f1_gain": round(totals_of(turned)["word_f1"] - totals_of(plain)["word_f1"], 4),
        }
        if errors:
            found[label]["angle_error_deg_median"] = round(statistics.median(errors), 3)
    skew, clean = found.get("skew"), found.get("clean")
    if skew and clean:
        found["pays"] = skew["word_f1_gain"] > 0 and clean["word_f1_gain"] >= 0
    return found


def _straightened(recognise: Recogniser) -> Recogniser:
    def run(image: GrayPage, index: int) -> Reading:
        return recognise(deskew(image)[0], index)

    return run


def _angle_errors(images: list[GrayPage], applied: list[float]) -> list[float]:
    """How far the estimate lands from the angle applied (the scan's own skew included)."""
    return [abs(estimate_skew(im) - a) for im, a in zip(images, applied, strict=True)]
