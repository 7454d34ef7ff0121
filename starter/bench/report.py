"""Figures of ``custody bench ocr``: speed, accuracy, totals and ratios; its table and plot.

Kept apart from the runs (``starter.bench.ocr``, ``starter.bench.pipeline``)
so the arithmetic can be read, and checked, on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from starter.bench import bands
from starter.bench.textmetrics import cer, token_f1, word_f1

if TYPE_CHECKING:
    from starter.bench.bare import Reading

Figures = dict[str, Any]


def speed(pages: int, seconds: float) -> Figures:
    return {
        "pages": pages,
        "seconds": round(seconds, 3),
        "seconds_per_page": round(seconds / pages, 3) if pages else 0.0,
        "pages_per_minute": round(60 * pages / seconds, 3) if seconds else 0.0,
    }


def figures(pages: int, seconds: float, text: str, truth: str) -> Figures:
    # CER is capped at 1 so that one runaway page cannot dominate the mean.
    return speed(pages, seconds) | {
        "cer": round(min(cer(text, truth), 1.0), 4),
        "word_f1": round(word_f1(text, truth), 4),
        "token_f1": round(token_f1(text, truth), 4),
    }


def scored(pages: int, seconds: float, readings: list[Reading], truth: str) -> Figures:
    """``figures`` of the pages' joined text, plus the document's mean confidence and bands."""
    from activities.output import PAGE_SEPARATOR

    found = figures(pages, seconds, PAGE_SEPARATOR.join(r.text for r in readings), truth)
    known = [r for r in readings if r.confidence is not None]
    chars = sum(len(r.text) for r in known)
    # Weighted by characters, as the OCR check weighs pages (activities.output).
    mean = sum((r.confidence or 0.0) * len(r.text) for r in known) / chars if chars else None
    found["mean_confidence"] = round(mean, 4) if mean is not None else None
    read = [s for r in readings for s in r.scored]
    if read:
        found["bands"] = bands.count(bands.judge(read, truth))
    return found


def totals_of(rows: list[Figures]) -> Figures:
    n = len(rows) or 1
    return speed(sum(r["pages"] for r in rows), sum(r["seconds"] for r in rows)) | {
        "cer": round(sum(r["cer"] for r in rows) / n, 4),
        "word_f1": round(sum(r["word_f1"] for r in rows) / n, 4),
        "token_f1": round(sum(r["token_f1"] for r in rows) / n, 4),
    }


def pages_per_minute(figures: Figures) -> float:
    """An engine's pages per minute: Custody's from its lanes pass (``throughput``) when the
    bench ran one, as a worker reads; a bare engine's as a user runs it, a page at a time."""
    throughput = figures.get("throughput")
    return float(throughput["pages_per_minute"] if throughput else figures["pages_per_minute"])


def ratios_of(totals: dict[str, Figures]) -> Figures:
    def ratio(a: str, b: str, key: str) -> float | None:
        if a not in totals or b not in totals or not totals[b][key]:
            return None
        return round(float(totals[a][key]) / float(totals[b][key]), 3)

    def speed_ratio(a: str, b: str) -> float | None:
        if a not in totals or b not in totals or not pages_per_minute(totals[b]):
            return None
        return round(pages_per_minute(totals[a]) / pages_per_minute(totals[b]), 3)

    found: Figures = {}
    for base in ("easyocr_default", "tesseract", "rapidocr_default"):
        found[f"custody_vs_{base}"] = {
            "pages_per_minute": speed_ratio("custody", base),
            "word_f1": ratio("custody", base, "word_f1"),
            "token_f1": ratio("custody", base, "token_f1"),
        }
    found["pipeline_over_custody_seconds"] = ratio("pipeline", "custody", "seconds")
    return found


def table(results: Figures) -> str:
    """Per-document seconds/page and word F1, then per-engine totals and the ratios."""
    engines = list(results["engines"])
    lines = [f"{'document':<34}{'pg':>3}" + "".join(f"{e[:15]:>17}" for e in engines)]
    lines.append(" " * 37 + "".join(f"{'s/pg   F1':>17}" for _ in engines))
    for row in results["documents"]:
        cells = (row["engines"][e] for e in engines)
        figs = "".join(f"{c['seconds_per_page']:>10.2f}{c['word_f1']:>7.3f}" for c in cells)
        lines.append(f"{row['document'][:33]:<34}{row['pages']:>3}{figs}")
    lines.append("")
    lines.append(f"{'engine':<17}{'pages':>6}{'seconds':>9}{'s/page':>8}{'pages/min':>10}")
    lines[-1] += f"{'CER':>7}{'word F1':>8}{'token F1':>9}"
    for name, t in results["engines"].items():
        lines.append(
            f"{name:<17}{t['pages']:>6}{t['seconds']:>9.1f}{t['seconds_per_page']:>8.2f}"
            f"{t['pages_per_minute']:>10.2f}{t['cer']:>7.3f}{t['word_f1']:>8.3f}"
            f"{t['token_f1']:>9.3f}"
        )
        if "throughput" in t:
            lanes = t["throughput"]
            lines.append(
                f"{'  in ' + str(lanes['lanes']) + ' lanes':<17}{lanes['pages']:>6}"
                f"{lanes['seconds']:>9.1f}{lanes['seconds_per_page']:>8.2f}"
                f"{lanes['pages_per_minute']:>10.2f}"
            )
    lines.append("")
    for name, value in results["ratios"].items():
        lines.append(f"{name}: {value}")
    return "\n".join(lines)


def plot(results: Figures, out: Path) -> None:
    """Two panels, per document: seconds per page and word F1, one bar per engine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    engines, rows = list(results["engines"]), results["documents"]
    fig, axes = plt.subplots(2, 1, figsize=(max(8, len(rows) * 0.7), 8), sharex=True)
    width = 0.8 / len(engines)
    for i, engine in enumerate(engines):
        xs = [n + i * width for n in range(len(rows))]
        for ax, key in zip(axes, ("seconds_per_page", "word_f1"), strict=True):
            ax.bar(xs, [r["engines"][engine][key] for r in rows], width, label=engine)
    axes[0].set_ylabel("seconds per page")
    axes[1].set_ylabel("word F1")
    axes[0].legend()
    axes[1].set_xticks([n + 0.4 - width / 2 for n in range(len(rows))])
    axes[1].set_xticklabels([r["document"][:24] for r in rows], rotation=60, ha="right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
