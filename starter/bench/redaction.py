"""``custody bench redaction``: does any redacted view of the referrals still hold a removed string?

Each referral with ground truth (``<stem>.fields.json``) is rendered in the
sandboxed child, read by the configured OCR engine and by field extraction
(``activities.fields.extract``), and its redacted view made with the
built-in ``default`` policy (``activities.redact.core``). Its truth values
for the policy's fields (participant ID, clinician) are removed wherever
printed, and the view's check looks for them and for every string the plan
removed: a view that fails is a leak. The corpus's referrals are used when
it holds any, else ``--referrals N`` are drawn (seed ``--seed``).

JSON: ``documents``, ``views`` (made and checked clean), ``leaks`` (refused
by the check, REDACTION_LEAK), ``failed`` (other codes, counted),
``regions``, ``seconds_per_view``, ``target_met`` (no leak and a view of
every document).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from activities.engines.base import OcrEngine
from activities.redact.policy import DEFAULT_REDACTION
from custody.errors import Code, CustodyError, UsageError
from custody.settings import Settings
from starter.bench.fields_score import Truth, truth_for
from starter.cli.output import Exit, emit

_MEDIA = {
    ".png": "image/png",
    ".pdf": "application/pdf",
    ".tif": "image/tiff",
    ".jpg": "image/jpeg",
}


def run(args: argparse.Namespace, settings: Settings) -> int:
    from activities.engines.selection import build_engine
    from starter.bench.ocr import default_corpus
    from starter.bench.referrals import write_set

    corpus: Path = args.corpus or default_corpus()
    if not corpus.is_dir():
        raise UsageError(detail=f"no corpus at {corpus}")
    with tempfile.TemporaryDirectory(prefix="custody-redaction-") as tmp:
        docs = referrals(corpus, args.limit)
        if not docs and args.referrals:
            write_set(Path(tmp), args.referrals, args.seed)
            docs = referrals(Path(tmp), args.limit)
        report = figures(docs, build_engine(settings), settings)
    emit(args, report, _text(report))
    return Exit.OK if report["target_met"] else Exit.FAILED


def referrals(folder: Path, limit: int | None) -> list[tuple[Path, Truth]]:
    found = []
    for path in sorted(folder.iterdir()):
        truth = truth_for(path) if path.suffix.lower() in _MEDIA else None
        if truth is not None and truth.type == "referral":
            found.append((path, truth))
    return found[:limit] if limit is not None else found


def figures(
    docs: list[tuple[Path, Truth]], engine: OcrEngine, settings: Settings
) -> dict[str, Any]:
    """Views made, leaks refused, other failures: over every referral in ``docs``."""
    outcomes: Counter[str] = Counter()
    regions, started = 0, time.perf_counter()
    for path, truth in docs:
        try:
            regions += view_regions(path, truth, engine, settings)
            outcomes["ok"] += 1
        except CustodyError as err:
            outcomes[str(err.code)] += 1
    made, leaks = outcomes.pop("ok", 0), outcomes.pop(Code.REDACTION_LEAK.value, 0)
    seconds = time.perf_counter() - started
    return {
        "documents": len(docs),
        "views": made,
        "leaks": leaks,
        "failed": dict(outcomes),
        "regions": regions,
        "seconds_per_view": round(seconds / max(1, len(docs)), 2),
        "target_met": bool(docs) and leaks == 0 and made == len(docs),
    }


def view_regions(path: Path, truth: Truth, engine: OcrEngine, settings: Settings) -> int:
    """Make one checked view (raising REDACTION_LEAK if it fails); its region count."""
    from activities.fields import extract
    from activities.inspect.sandboxed import iter_pages_sandboxed
    from activities.redact.core import make_view

    dpi, limits = settings.limits.ocr_dpi, settings.limits
    media = _MEDIA[path.suffix.lower()]
    images = list(iter_pages_sandboxed(path, media, dpi, 0, limits))
    pages = [engine.recognise(image, index) for index, image in images]
    known = [str(truth.fields[name]) for name in DEFAULT_REDACTION.fields if name in truth.fields]
    made = make_view(images, pages, extract(pages), DEFAULT_REDACTION, engine, dpi, known)
    return len(made.plan.regions)


def _text(report: dict[str, Any]) -> str:
    verdict = "met" if report["target_met"] else "NOT met"
    return (
        f"redaction: {report['views']}/{report['documents']} views clean, "
        f"{report['leaks']} leaks, failed {report['failed']}, "
        f"{report['seconds_per_view']} s/view; target {verdict}"
    )
