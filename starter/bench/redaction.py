"""``custody bench redaction``: is any ground-truth identifier readable in a kept view?

Eleven sets, each document read as the pipeline reads it (a PDF's born-digital
pages as their text layer, every other page rendered in the sandboxed child
and OCRed by the configured engine; fields by ``activities.fields.extract``),
and its view made as ``custody redact`` makes it (``activities.redact.core``),
the plan told nothing of the truth:

- ``referrals``: ``--referrals N`` synthetic scans (``starter.bench.referrals``,
  seed ``--seed``); identifiers the participant ID and the clinician.
- ``referrals_c``: ``--referrals N`` scans of the third generator, written blind
  (``starter.bench.referrals_c``); identifiers the participant ID, the
  clinician and the patient's name, birth date, phone and address.
- ``referrals_d``: ``--referrals N`` scans of the fourth generator, also written
  blind (``starter.bench.referrals_d``); identifiers those of ``referrals_c``, the
  MRN, and every other person and identifier the page prints (``other_person_N``,
  ``other_id_N``: a nurse, the practice's partners, an NHS or member number).
- ``referrals_e``: ``--referrals N`` scans of the fifth generator, written blind too
  (``starter.bench.referrals_e``); identifiers those of ``referrals_d`` (comb boxes,
  a "Re:" line, a printed e-mail's header and footer among the places they stand).
- ``referrals_f``: ``--referrals N`` scans of the sixth generator, written blind
  too (``starter.bench.referrals_f``); identifiers those of ``referrals_e`` (a
  next of kin, a letterhead's partner, a fax's cover sheet, a hand among them).
- ``referrals_g``: ``--referrals N`` scans of the seventh generator, written blind
  too (``starter.bench.referrals_g``); identifiers those of ``referrals_f`` (a
  patient sticker, a record system's banner, a typist and an audit trail among them).
- ``receipts``: the corpus's SROIE receipts; identifiers the company and the address.
- ``born_digital_dev``, ``born_digital_held_out`` and ``born_digital_held_out_b``:
  ``--born-digital N`` pages each (``starter.bench.born_digital``) with
  annotations, stamps and label images; identifiers the patient's name, birth
  date, MRN, participant ID, address and phone. ``held_out_b`` was never
  tuned on (``held_out`` was, once: see that module).

Every view made, kept or refused, is then read by the bench's own pass
(``starter.bench.redaction_truth``): a Tesseract OCR of its rendered pages
(another engine than the workers'; the check's second reader is Tesseract
too, but in sparse-text mode, psm 11, where the bench keeps the page
segmentation it was measured with, psm 3), its text layer, bytes and metadata,
searched for the true values (``--reader easyocr``: EasyOCR's reading instead, an engine
of neither of the check's families). JSON, per set under ``sets`` and overall under
``overall``: ``views`` (all views made), ``refused``, ``refused_clean``
(refused though no true value was readable in it), ``leaks`` (``{kind: count}``
of true values readable in a kept view), ``failed`` (other codes),
``kept_word_share`` (the share of the source's words the kept views keep: what
redaction costs) and ``seconds_per_view``; ``--sets`` runs only the sets named; ``per_document``
rows (file, set, state, code, leaks as ``kind@where``, ``words`` as ``[kept,
source]``); ``target_met``: no leak
anywhere and ``refused_clean / views`` at most 0.1.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from activities.engines.base import OcrEngine
from activities.redact.policy import RedactionPolicy, load_redaction
from custody.errors import CustodyError, RedactionLeak, UsageError
from custody.settings import Settings
from starter.bench.fields_score import Truth, truth_for
from starter.cli.output import Exit, emit

_MEDIA = {
    ".png": "image/png",
    ".pdf": "application/pdf",
    ".tif": "image/tiff",
    ".jpg": "image/jpeg",
}
_MAX_REFUSED_CLEAN = 0.1


def run(args: argparse.Namespace, settings: Settings) -> int:
    from activities.engines.selection import build_checker, build_engine
    from starter.bench import (
        born_digital,
        referrals,
        referrals_b,
        referrals_c,
        referrals_d,
        referrals_e,
        referrals_f,
        referrals_g,
    )
    from starter.bench.ocr import default_corpus

    corpus: Path = args.corpus or default_corpus()
    if not corpus.is_dir():
        raise UsageError(detail=f"no corpus at {corpus}")
    policy = load_redaction(getattr(args, "policy", "default"))
    count = getattr(args, "born_digital", 6)
    with tempfile.TemporaryDirectory(prefix="custody-redaction-") as tmp:
        root = Path(tmp)
        build = {
            "referrals": lambda: documents(
                referrals.write_set(root / "r", args.referrals, args.seed)
            ),
            # The fields engineer's second generator: drawn after the detectors were
            # written, never tuned on by them (its held-out split is not the fields' tuning).
            "referrals_b_held_out": lambda: documents(
                referrals_b.write_set(root / "rb", args.referrals, args.seed, "held_out")
            ),
            # The third generator, written blind; its patients' identifiers beside the truth.
            "referrals_c": lambda: with_identifiers(
                documents(referrals_c.write_set(root / "rc", args.referrals, args.seed))
            ),
            # The fourth, written blind too; its identifiers beside the truth the same way.
            "referrals_d": lambda: with_identifiers(
                documents(referrals_d.write_set(root / "rd", args.referrals, args.seed))
            ),
            # The fifth, written blind as well; its identifiers beside the truth likewise.
            "referrals_e": lambda: with_identifiers(
                documents(referrals_e.write_set(root / "re", args.referrals, args.seed))
            ),
            # The sixth, written blind as the others; its identifiers beside the truth too.
            "referrals_f": lambda: with_identifiers(
                documents(referrals_f.write_set(root / "rf", args.referrals, args.seed))
            ),
            # The seventh, written blind as the others; its identifiers beside the truth too.
            "referrals_g": lambda: with_identifiers(
                documents(referrals_g.write_set(root / "rg", args.referrals, args.seed))
            ),
            "receipts": lambda: documents(sorted(corpus.glob("sroie_*"))),
            **{
                f"born_digital_{split}": _born_digital(root, split, count)
                for split in born_digital.SPLITS
            },
        }
        wanted = (getattr(args, "sets", None) or ",".join(build)).split(",")
        # Only the sets asked for are drawn: a set left out is never generated.
        sets = {name: make()[: args.limit] for name, make in build.items() if name in wanted}
        engines = (build_engine(settings), build_checker(settings))
        report = figures(sets, policy, engines, _reader(args, settings), settings)
    emit(args, report, _text(report))
    return Exit.OK if report["target_met"] else Exit.FAILED


def _reader(args: argparse.Namespace, settings: Settings) -> OcrEngine:
    """The bench's own reading: Tesseract (psm 3), or EasyOCR with ``--reader easyocr``."""
    from activities.engines.tesseract import TesseractEngine

    if getattr(args, "reader", "tesseract") == "easyocr":
        from activities.engines.base import EasyOcrEngine

        return EasyOcrEngine(settings.effective_torch_threads(), device=settings.ocr_device)
    return TesseractEngine(1)


def _born_digital(root: Path, split: str, count: int) -> Callable[[], list[tuple[Path, Truth]]]:
    from starter.bench import born_digital

    return lambda: documents(born_digital.write_set(root / split, count, split))


def documents(paths: list[Path]) -> list[tuple[Path, Truth]]:
    """The pages among ``paths`` that have ground truth, sorted."""
    found = [(p, truth_for(p)) for p in sorted(paths) if p.suffix.lower() in _MEDIA]
    return [(p, t) for p, t in found if t is not None]


def with_identifiers(docs: list[tuple[Path, Truth]]) -> list[tuple[Path, Truth]]:
    """Each truth with the patient identifiers printed on its page added (the third to
    sixth generators keep them apart, in ``<stem>.identifiers.json``, where the fields
    bench does not count them; both read it alike)."""
    from starter.bench.referral_files import identifiers_for

    return [(p, Truth(t.type, {**t.fields, **identifiers_for(p)}, t.split)) for p, t in docs]


def figures(
    sets: dict[str, list[tuple[Path, Truth]]],
    policy: RedactionPolicy,
    engines: tuple[OcrEngine, OcrEngine | None],
    reader: OcrEngine,
    settings: Settings,
) -> dict[str, Any]:
    """Per set and overall: views, refused, refused clean, leaks by kind, failed.
    ``engines``: the workers' and the check's second reader, as ``build_checker`` makes it."""
    rows, per_set = [], {}
    for name, docs in sets.items():
        started = time.perf_counter()
        mine = [
            dict(audit_view(p, t, policy, engines, reader, settings), set=name) for p, t in docs
        ]
        per_set[name] = _summary(mine, time.perf_counter() - started)
        rows += mine
    overall = _summary(rows, sum(s["seconds"] for s in per_set.values()))
    ratio = overall["refused_clean"] / max(1, overall["views"])
    return {
        "sets": per_set,
        "overall": overall,
        "held_out": "born_digital_held_out_b",
        "per_document": rows,
        "target_met": overall["views"] > 0 and not overall["leaks"] and ratio <= _MAX_REFUSED_CLEAN,
    }


def audit_view(
    path: Path,
    truth: Truth,
    policy: RedactionPolicy,
    engines: tuple[OcrEngine, OcrEngine | None],
    reader: OcrEngine,
    settings: Settings,
) -> dict[str, Any]:
    """Make one view, kept or refused, and search it with the bench's own reading."""
    from activities.fields import extract
    from activities.redact.check import read_surfaces
    from activities.redact.core import make_view
    from starter.bench.redaction_truth import truth_leaks, truth_strings

    row: dict[str, Any] = {"document": path.name, "state": "kept", "code": None, "leaks": []}
    dpi, (engine, second) = settings.limits.ocr_dpi, engines
    try:
        images, pages = _read(path, engine, settings)
        made = make_view(images, pages, extract(pages), policy, engine, dpi, second)
        pdf = made.pdf
        row["words"] = [_words(made.plan.kept), _words(pages)]
    except RedactionLeak as err:  # refused: its detail names kinds and places, never text
        pdf = err.view
        row.update(state="refused", code=str(err.code))
    except CustodyError as err:
        return dict(row, state="failed", code=str(err.code), detail=err.detail)
    row["leaks"] = truth_leaks(read_surfaces(pdf, reader, dpi), truth_strings(truth))
    return row


def _read(path: Path, engine: OcrEngine, settings: Settings) -> tuple[list[Any], list[Any]]:
    """The page images and the words the pipeline would publish: text layers where a PDF
    page has one, OCR elsewhere; both from the sandboxed child."""
    from activities.inspect.sandboxed import iter_layers_sandboxed, iter_pages_sandboxed

    dpi, limits, media = settings.limits.ocr_dpi, settings.limits, _MEDIA[path.suffix.lower()]
    images = list(iter_pages_sandboxed(path, media, dpi, 0, limits))
    if media != "application/pdf":
        return images, [engine.recognise(image, index) for index, image in images]
    layers = {i: layer for i, layer, _ in iter_layers_sandboxed(path, dpi, 0, limits) if layer}
    return images, [layers.get(i) or engine.recognise(image, i) for i, image in images]


def _words(pages: Any) -> int:
    return sum(len(page.words) for page in pages)


def _summary(rows: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    made = [r for r in rows if r["state"] != "failed"]
    refused = [r for r in made if r["state"] == "refused"]
    kept_leaks = Counter(
        leak.split("@")[0] for r in made if r["state"] == "kept" for leak in r["leaks"]
    )
    return {
        "views": len(made),
        "refused": len(refused),
        "refused_clean": sum(1 for r in refused if not r["leaks"]),
        "leaks": dict(sorted(kept_leaks.items())),
        "failed": dict(Counter(r["code"] for r in rows if r["state"] == "failed")),
        # The cost of redacting: the share of the source's words the kept views keep.
        "kept_word_share": round(
            sum(r["words"][0] for r in made if "words" in r)
            / max(1, sum(r["words"][1] for r in made if "words" in r)),
            3,
        ),
        "seconds": round(seconds, 1),
        "seconds_per_view": round(seconds / max(1, len(rows)), 2),
    }


def _text(report: dict[str, Any]) -> str:
    lines = []
    for name, s in [*report["sets"].items(), ("overall", report["overall"])]:
        lines.append(
            f"{name}: {s['views']} views, {s['refused']} refused ({s['refused_clean']} clean), "
            f"leaks {s['leaks'] or 'none'}, failed {s['failed'] or 'none'}, "
            f"{s['kept_word_share']:.0%} of words kept, "
            f"{s['seconds_per_view']} s/view"
        )
    lines.append(f"target {'met' if report['target_met'] else 'NOT met'}")
    return "\n".join(lines)
