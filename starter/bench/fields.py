"""``custody bench fields``: fields read by the real pipeline, against ground truth.

Every scan with ground truth (``starter.bench.fields_score``) is submitted to a
throwaway stack of separate processes (``starter.bench.pipeline``) **without
its type**, so classification is measured with the fields. Referrals come from
the corpus when it holds any, else ``--referrals N`` are drawn with
``starter.bench.referrals.write_set`` (seed ``--seed``) into a temporary folder.
A document that was not published counts each of its fields as missing.

JSON: ``documents``, ``states``, ``classification_accuracy``, ``fields`` (per
field ``expected``, ``exact``, ``missing``, ``wrong``, ``wrong_confident``,
``exact_share``), ``by_type`` (the same per ground-truth type), ``targets``,
and ``pairs``: a generic form's key-value pairs against FUNSD's links, for the
scans with a FUNSD annotation (``starter.bench.pairs``).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import uuid4

from custody.errors import UsageError
from custody.fields import Extraction
from custody.models import DocState, DocumentResult, SignedRecord
from custody.settings import Settings
from starter.bench.fields_score import Tally, Truth, targets, truth_for
from starter.bench.ocr import default_corpus
from starter.bench.pairs import PairTally, form_truth, links_for
from starter.bench.pipeline import pipeline_stack
from starter.bench.referrals import write_set
from starter.cli.output import Exit, emit
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait

_SCANS = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf"})


def scans(corpus: Path, limit: int | None) -> list[tuple[Path, Truth]]:
    """Scans with ground truth, sorted by name; the first ``limit``."""
    found = []
    for path in sorted(corpus.iterdir()):
        truth = (truth_for(path) or form_truth(path)) if path.suffix.lower() in _SCANS else None
        if truth is not None:
            found.append((path, truth))
    return found[:limit] if limit is not None else found


def run(args: argparse.Namespace, settings: Settings) -> int:
    corpus: Path = args.corpus or default_corpus()
    if not corpus.is_dir():
        raise UsageError(detail=f"no corpus at {corpus}")
    with tempfile.TemporaryDirectory(prefix="custody-referrals-") as tmp:
        docs = scans(corpus, args.limit)
        if args.referrals and not any(t.type == "referral" for _, t in docs):
            write_set(Path(tmp), args.referrals, args.seed)
            docs += scans(Path(tmp), None)
        started = time.perf_counter()
        tallies, pairs = asyncio.run(_bench(docs, settings))
    report = _report(tallies, len(docs), time.perf_counter() - started, pairs)
    emit(args, report, _text(report))
    return Exit.OK


async def _bench(
    docs: list[tuple[Path, Truth]], settings: Settings
) -> tuple[dict[str, Tally], PairTally]:
    tallies: dict[str, Tally] = {"all": Tally()}
    pairs = PairTally()
    async with pipeline_stack(settings) as pipeline:
        client = pipeline.client
        tenant = f"bench-{uuid4().hex[:12]}"  # fresh, so no earlier run's record is reused
        subs = [await submit(client, path, tenant=tenant) for path, _ in docs]
        results = await asyncio.gather(*(wait(client, s.sha256, tenant=tenant) for s in subs))
        for (path, truth), result in zip(docs, results, strict=True):
            read, band = _read(client, result)
            for key in ("all", truth.type):
                tallies.setdefault(key, Tally()).add(truth, read, band, result.state.value)
            linked = links_for(path)
            if linked is not None:
                pairs.add(linked, read.pairs if read is not None else [])
    return tallies, pairs


def _read(client: CustodyClient, result: DocumentResult) -> tuple[Extraction | None, str | None]:
    """The fields a published document's record points to, and its band."""
    if result.state is not DocState.PUBLISHED or result.record_key is None:
        return None, None
    record = SignedRecord.model_validate_json(client.store.get(result.record_key)).record
    if record.fields_key is None:
        return None, record.confidence_band
    body = client.store.get(record.fields_key)
    return Extraction.model_validate_json(body), record.confidence_band


def _report(
    tallies: dict[str, Tally], documents: int, seconds: float, pairs: PairTally | None = None
) -> dict[str, Any]:
    overall = tallies.pop("all")
    return {
        **overall.figures(),
        "pairs": (pairs or PairTally()).figures(),
        "by_type": {kind: t.figures() for kind, t in sorted(tallies.items())},
        "targets": targets(overall),
        "seconds": round(seconds, 1),
        "submitted": documents,
    }


def _text(report: dict[str, Any]) -> str:
    lines = [
        f"{report['documents']} documents, classification {report['classification_accuracy']}",
        f"{'field':<18}{'expected':>9}{'exact':>7}{'missing':>8}{'wrong':>7}{'wrong!':>7}",
    ]
    for name, f in report["fields"].items():
        lines.append(
            f"{name:<18}{f['expected']:>9}{f['exact']:>7}{f['missing']:>8}"
            f"{f['wrong']:>7}{f['wrong_confident']:>7}"
        )
    p = report["pairs"]
    if p["expected"]:
        lines.append(f"form pairs: precision {p['precision']}, recall {p['recall']}, f1 {p['f1']}")
    lines.append(f"targets met: {report['targets']['all_met']}")
    return "\n".join(lines)
