"""``custody bench fields``: fields read by the real pipeline, against ground truth.

Every scan with ground truth (``starter.bench.fields_score``) is submitted to a
throwaway stack of separate processes (``starter.bench.pipeline``) **without
its type**, so classification is measured with the fields. Referrals come from
the corpus when it holds any, else ``--referrals N`` are drawn from each of
five sets into a temporary folder (seed ``--seed``): the first generator
(``starter.bench.referrals``), the second's tuning families and the families
of its first held-out split (measured once, then tuned on), all three the
**tuning** split; and the second's held-out families and wordings, the
**held_out** split (``starter.bench.referrals_b``), never tuned on; and the
third generator's, written blind, the **held_out_c** split
(``starter.bench.referrals_c``), never tuned on either; and the fourth's to
seventh's, also written blind, the **held_out_d**, **held_out_e**, **held_out_f**
and **held_out_g** splits (``starter.bench.referrals_d``, ``referrals_e``,
``referrals_f``, ``referrals_g``). A
document that was not published counts each of its fields as missing. Each
published referral is also read again with its bars at zero
(``activities.fields.unbarred``) for the confidence bands.

JSON: ``documents``, ``states``, ``classification_accuracy``, ``fields`` (per
field ``expected``, ``exact``, ``missing``, ``wrong``, ``wrong_confident``,
``exact_share``, ``wrong_by_band``, ``proposed_bar``, ``bar``,
``wrong_at_or_above_bar``, ``bar_held``), ``consent_wrong``, ``by_type`` (the
same per ground-truth type), ``splits`` (the same for ``tuning`` and
``held_out`` and ``held_out_c`` to ``held_out_g``),
``targets`` (``held_out``, ``held_out_c`` to ``held_out_g``: issue #27's targets on
each of those splits),
and ``pairs``: a generic form's key-value pairs against FUNSD's links, for the
scans with a FUNSD annotation (``starter.bench.pairs``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import uuid4

from activities.fields import unbarred
from custody.errors import UsageError
from custody.fields import DocType, Extraction, FoundField
from custody.models import DocState, DocumentResult, PageText, SignedRecord
from custody.settings import Settings
from custody.stores.base import ObjectStore
from starter.bench.fields_score import Tally, Truth, held_out_targets, targets, truth_for
from starter.bench.ocr import default_corpus
from starter.bench.pairs import PairTally, form_truth, links_for
from starter.bench.pipeline import pipeline_stack
from starter.bench.referrals import write_set
from starter.bench.referrals_b import write_set as write_set_b
from starter.bench.referrals_c import write_set as write_set_c
from starter.bench.referrals_d import write_set as write_set_d
from starter.bench.referrals_e import write_set as write_set_e
from starter.bench.referrals_f import write_set as write_set_f
from starter.bench.referrals_g import write_set as write_set_g
from starter.cli.output import Exit, emit
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait

_SCANS = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf"})
#: The splits of the generators written blind, each with issue #27's targets of its own.
_BLIND = ("held_out_c", "held_out_d", "held_out_e", "held_out_f", "held_out_g")


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
            docs += drawn_referrals(Path(tmp), args.referrals, args.seed)
        started = time.perf_counter()
        tallies, pairs = asyncio.run(_bench(docs, settings))
    report = _report(tallies, len(docs), time.perf_counter() - started, pairs)
    emit(args, report, _text(report))
    return Exit.OK


def drawn_referrals(out: Path, count: int, seed: int) -> list[tuple[Path, Truth]]:
    """``count`` referrals from each set: the first generator's, the second's three sets,
    and the third's to the seventh's (their own splits, ``held_out_c`` to ``held_out_g``)."""
    write_set(out / "a", count, seed)
    for split in ("tuning", "seen", "held_out"):
        write_set_b(out / f"b-{split}", count, seed, split)
    write_set_c(out / "c-held_out", count, seed)
    write_set_d(out / "d-held_out", count, seed)
    write_set_e(out / "e-held_out", count, seed)
    write_set_f(out / "f-held_out", count, seed)
    write_set_g(out / "g-held_out", count, seed)
    parts = ("a", "b-tuning", "b-seen", "b-held_out", *(f"{g}-held_out" for g in "cdefg"))
    return [doc for part in parts for doc in scans(out / part, None)]


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
            read, band, before_bars = _read(client, result)
            keys = ["all", truth.type] + (
                [f"split:{truth.split}"] if truth.type == "referral" else []
            )
            for key in keys:
                tally = tallies.setdefault(key, Tally())
                tally.add(truth, read, band, result.state.value, before_bars)
            linked = links_for(path)
            if linked is not None:
                pairs.add(linked, read.pairs if read is not None else [])
    return tallies, pairs


def _read(
    client: CustodyClient, result: DocumentResult
) -> tuple[Extraction | None, str | None, dict[str, FoundField] | None]:
    """The fields a published document's record points to, its band, and (a referral's)
    fields read again from its published pages with no bar."""
    if result.state is not DocState.PUBLISHED or result.record_key is None:
        return None, None, None
    record = SignedRecord.model_validate_json(client.store.get(result.record_key)).record
    if record.fields_key is None:
        return None, record.confidence_band, None
    read = Extraction.model_validate_json(client.store.get(record.fields_key))
    return read, record.confidence_band, before_bars(client.store, read, record.pages_key)


def before_bars(
    store: ObjectStore, read: Extraction, pages_key: str
) -> dict[str, FoundField] | None:
    """A referral's fields read again from its stored pages with no bar; None for any
    other type. A stored type is a plain string since configured types: compared by value."""
    if read.classification.type != DocType.REFERRAL:
        return None
    pages = [PageText.model_validate(p) for p in json.loads(store.get(pages_key))]
    return unbarred(pages)


def _report(
    tallies: dict[str, Tally], documents: int, seconds: float, pairs: PairTally | None = None
) -> dict[str, Any]:
    overall = tallies.pop("all")
    splits = {k.split(":", 1)[1]: tallies.pop(k) for k in sorted(tallies) if k.startswith("split:")}
    aims = targets(overall, splits.get("held_out"))
    for blind in _BLIND:  # the generators written blind
        if splits.get(blind) and splits[blind].fields:
            aims[blind] = held_out_targets(splits[blind])
    return {
        **overall.figures(),
        "pairs": (pairs or PairTally()).figures(),
        "by_type": {kind: t.figures() for kind, t in sorted(tallies.items())},
        "splits": {name: t.figures() for name, t in splits.items()},
        "targets": aims,
        "seconds": round(seconds, 1),
        "submitted": documents,
    }


def _text(report: dict[str, Any]) -> str:
    lines = [
        f"{report['documents']} documents, classification {report['classification_accuracy']}",
        f"{'field':<18}{'expected':>9}{'exact':>7}{'missing':>8}{'wrong':>7}{'wrong!':>7}",
    ]
    for title, figures in [("all", report), *report["splits"].items()]:
        lines.append(f"-- {title}: consent values published opposite: {figures['consent_wrong']}")
        for name, f in figures["fields"].items():
            lines.append(
                f"{name:<18}{f['expected']:>9}{f['exact']:>7}{f['missing']:>8}"
                f"{f['wrong']:>7}{f['wrong_confident']:>7}"
            )
    p = report["pairs"]
    if p["expected"]:
        lines.append(f"form pairs: precision {p['precision']}, recall {p['recall']}, f1 {p['f1']}")
    lines.append(f"targets met: {report['targets']['all_met']}")
    for split in ("held_out", *_BLIND):
        if split in report["targets"]:
            lines.append(f"{split} targets met: {report['targets'][split]['met']}")
    return "\n".join(lines)
