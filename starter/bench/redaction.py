"""``custody bench redaction``: does any redacted view still hold a value it should not?

Each document with ground truth for a field the redaction policy removes
(``<stem>.fields.json`` beside a referral, SROIE's ``_annotations/<stem>.key.json``
for a policy that names receipt fields) is rendered in the sandboxed child,
read by the configured OCR engine and by field extraction
(``activities.fields.extract``), and its redacted view made as ``custody
redact`` makes it (``activities.redact.core``), the plan told nothing of the
truth. The view's own check refuses it if any string the plan removed is
still there (``refused``: REDACTION_LEAK). A view that passes is then searched,
in its re-extracted text, its re-OCR'd pages and its bytes, for the true value
of every redacted field (``starter.bench.redaction_truth``): what the plan
missed and its check could not know to look for. The corpus's documents are
used when it holds any, else ``--referrals N`` synthetic ones (seed ``--seed``).

JSON: ``documents``, ``views`` (made and passed their check), ``refused``,
``failed`` (other codes, counted), ``fields_searched``, ``leaks`` (true values
found in passed views: one per field and place), ``leaking_documents``,
``per_document`` (file name, code and its detail, regions, ``leaks`` as
``field@where``),
``regions``, ``seconds_per_view``, ``target_met`` (a passed view of every
document and no leak).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from activities.engines.base import OcrEngine
from activities.redact.policy import RedactionPolicy, load_redaction
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
    policy = load_redaction(getattr(args, "policy", "default"))
    with tempfile.TemporaryDirectory(prefix="custody-redaction-") as tmp:
        docs = documents(corpus, policy, args.limit)
        if not docs and args.referrals:
            write_set(Path(tmp), args.referrals, args.seed)
            docs = documents(Path(tmp), policy, args.limit)
        report = figures(docs, policy, build_engine(settings), settings)
    emit(args, report, _text(report))
    return Exit.OK if report["target_met"] else Exit.FAILED


def documents(folder: Path, policy: RedactionPolicy, limit: int | None) -> list[tuple[Path, Truth]]:
    """The scans whose ground truth holds a field ``policy`` removes, sorted."""
    found = []
    for path in sorted(folder.iterdir()):
        truth = truth_for(path) if path.suffix.lower() in _MEDIA else None
        if truth is not None and set(truth.fields) & set(policy.fields):
            found.append((path, truth))
    return found[:limit] if limit is not None else found


def figures(
    docs: list[tuple[Path, Truth]],
    policy: RedactionPolicy,
    engine: OcrEngine,
    settings: Settings,
) -> dict[str, Any]:
    """Views passed, refused, failed and true values leaked, over every document of ``docs``."""
    rows, started = [], time.perf_counter()
    for path, truth in docs:
        row: dict[str, Any] = {"document": path.name, "code": None, "regions": 0, "leaks": []}
        try:
            row.update(audit_view(path, truth, policy, engine, settings))
        except CustodyError as err:  # its detail says where, never what (REDACTION_LEAK)
            row.update(code=str(err.code), detail=err.detail)
        rows.append(row)
    codes = [r["code"] for r in rows if r["code"] is not None]
    refused = codes.count(Code.REDACTION_LEAK.value)
    failed = {c: codes.count(c) for c in sorted(set(codes)) if c != Code.REDACTION_LEAK.value}
    views, leaks = len(docs) - len(codes), sum(len(r["leaks"]) for r in rows)
    return {
        "documents": len(docs),
        "views": views,
        "refused": refused,
        "failed": failed,
        "fields_searched": sum(r.get("fields", 0) for r in rows),
        "leaks": leaks,
        "leaking_documents": sum(1 for r in rows if r["leaks"]),
        "per_document": [{k: v for k, v in r.items() if k != "fields"} for r in rows],
        "regions": sum(r["regions"] for r in rows),
        "seconds_per_view": round((time.perf_counter() - started) / max(1, len(docs)), 2),
        "target_met": bool(docs) and leaks == 0 and views == len(docs),
    }


def audit_view(
    path: Path, truth: Truth, policy: RedactionPolicy, engine: OcrEngine, settings: Settings
) -> dict[str, Any]:
    """Make one view (REDACTION_LEAK if its own check refuses it) and search it for the truth:
    its region count, the fields searched and where a true value was found."""
    from activities.fields import extract
    from activities.inspect.sandboxed import iter_pages_sandboxed
    from activities.redact.core import make_view
    from starter.bench.redaction_truth import truth_leaks, truth_strings

    dpi, limits = settings.limits.ocr_dpi, settings.limits
    images = list(iter_pages_sandboxed(path, _MEDIA[path.suffix.lower()], dpi, 0, limits))
    pages = [engine.recognise(image, index) for index, image in images]
    made = make_view(images, pages, extract(pages), policy, engine, dpi)
    strings = truth_strings(truth, policy.fields)
    return {
        "regions": len(made.plan.regions),
        "fields": len(strings),
        "leaks": truth_leaks(made.surfaces, strings),
    }


def _text(report: dict[str, Any]) -> str:
    verdict = "met" if report["target_met"] else "NOT met"
    return (
        f"redaction: {report['views']}/{report['documents']} views passed their check, "
        f"{report['refused']} refused, {report['leaks']} true values leaked "
        f"({report['leaking_documents']} documents), failed {report['failed']}, "
        f"{report['seconds_per_view']} s/view; target {verdict}"
    )
