"""Run scenarios against one throwaway stack and report what they found."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from starter.chaos import checks
from starter.chaos.harness import REPO, ChaosStack
from starter.chaos.scenarios import SCENARIOS
from starter.chaos.trial import Context, Trial
from starter.client.connect import CustodyClient

CORPUS = REPO.parent / "shared" / "corpus"


async def run(names: list[str], trials: int, seed: int, corpus: Path = CORPUS) -> dict[str, Any]:
    """Every trial of every named scenario, then the run-wide log scan."""
    with tempfile.TemporaryDirectory(prefix="custody-chaos-") as tmp:
        home = Path(tmp)
        examples = _examples(home / "examples")
        stack = ChaosStack(home / "home")
        try:
            await asyncio.to_thread(stack.start, "temporal")
            custody = await CustodyClient.connect(stack.settings)
            used = [*examples.glob("*.txt"), corpus / "ocr_gt" / "tess_phototest.txt"]
            truth = checks.ground_truth(sorted(used))
            ctx = Context(stack, custody, examples, corpus, truth)
            done = [await _trial(ctx, name, i, seed) for name in names for i in range(trials)]
            # Logs of every process, read after the last trial (they only grow),
            # and the dev server's Prometheus output (labels, exemplars).
            leaks = checks.log_leaks(stack.settings.logs_dir, truth)
            metrics = await asyncio.to_thread(stack.metrics)
            scanned = {"metrics_bytes": len(metrics)}
            leaks += checks.leaks("temporal /metrics", metrics, truth)
            if not metrics:
                leaks.append("temporal /metrics could not be read: not scanned")
        finally:
            await asyncio.to_thread(stack.close)
    return {**summary(names, done, leaks, seed), "scanned": scanned}


async def _trial(ctx: Context, name: str, index: int, seed: int) -> Trial:
    trial = Trial(scenario=name, index=index, seed=seed * 1000 + index)
    return await SCENARIOS[name](ctx, trial)


def _examples(out: Path) -> Path:
    script = REPO / "examples" / "make_examples.py"
    subprocess.run(
        [sys.executable, str(script), "--out", str(out)], check=True, capture_output=True
    )
    return out


def summary(names: list[str], done: list[Trial], leaks: list[str], seed: int) -> dict[str, Any]:
    per = {
        name: {
            "trials": sum(1 for t in done if t.scenario == name),
            "faults": sum(len(t.faults) for t in done if t.scenario == name),
            "violations": sum(len(t.violations) for t in done if t.scenario == name),
            "skipped": sum(1 for t in done if t.scenario == name and "skipped" in t.detail),
        }
        for name in names
    }
    total = sum(len(t.violations) for t in done) + len(leaks)
    return {
        "seed": seed,
        "violations": total,
        "scenarios": per,
        "log_leaks": leaks,
        "trials": [asdict(t) for t in done],
    }


def table(report: dict[str, Any]) -> str:
    rows = [f"{'SCENARIO':<15} {'#':>2} {'SECS':>6} {'ATT':>4} {'VIOL':>4}  FAULTS / STATES"]
    for t in report["trials"]:
        states = ",".join(sorted(set(t["states"].values())))
        faults = "; ".join(t["faults"]) or "-"
        rows.append(
            f"{t['scenario']:<15} {t['index']:>2} {t['seconds']:>6.1f} {t['attempts']:>4} "
            f"{len(t['violations']):>4}  {faults} -> {states}"
        )
        rows += [f"{'':<15}    VIOLATION {v}" for v in t["violations"]]
        if "skipped" in t["detail"]:
            rows.append(f"{'':<15}    SKIPPED {t['detail']['skipped']}")
    rows += [f"log leak: {leak}" for leak in report["log_leaks"]]
    rows.append(f"seed {report['seed']}: {report['violations']} violation(s)")
    for name, n in report["scenarios"].items():
        rows.append(
            f"  {name:<15} trials={n['trials']} faults={n['faults']} viol={n['violations']}"
        )
    return "\n".join(rows)
