"""One chaos trial: submit documents, inject a fault meanwhile, check the invariants."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

from PIL import Image
from temporalio.service import RPCError

from custody import ids
from custody.models import DocState, DocumentResult
from starter.chaos import checks
from starter.chaos.harness import ChaosStack
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait

#: A trial's documents must be terminal within this, faults included.
TRIAL_TIMEOUT_S = 420.0
#: An abandoned attempt may still hold its staged copy this long after the winner.
STAGING_GRACE_S = 30.0


@dataclass(frozen=True)
class Doc:
    path: Path
    expected: DocState = DocState.PUBLISHED
    #: The code the terminal state must carry, when it matters (a poisoned engine).
    code: str | None = None


@dataclass
class Trial:
    scenario: str
    index: int
    seed: int
    faults: list[str] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)
    attempts: int = 0
    seconds: float = 0.0
    violations: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    """What every scenario works with; ``texts`` pins each document's published text."""

    stack: ChaosStack
    custody: CustodyClient
    examples: Path
    corpus: Path
    truth: set[str]
    texts: dict[str, str] = field(default_factory=dict)
    worker_env: dict[str, dict[str, str]] = field(default_factory=dict)

    def ensure(self, name: str, faults: str = "", **extra: str) -> int | None:
        """Run ``name`` with this fault configuration, restarting it only if it differs."""
        wanted = {"faults": faults, **extra}
        if self.worker_env.get(name) == wanted and name in self.stack.procs:
            return None
        if name in self.stack.procs:
            self.stack.kill(name)
        self.worker_env[name] = wanted
        return self.stack.start(name, faults, **extra)


Injector = Callable[[random.Random, Trial], Awaitable[None]]


async def run_trial(
    ctx: Context, trial: Trial, docs: list[Doc], inject: Injector | None = None
) -> Trial:
    tenant = f"c{uuid4().hex[:10]}"
    rng = random.Random(trial.seed)
    started = time.monotonic()
    subs = [await submit(ctx.custody, d.path, tenant=tenant) for d in docs]
    if inject is not None:
        await inject(rng, trial)
    timed = await asyncio.gather(*(_outcome(ctx.custody, s.sha256, tenant) for s in subs))
    results = [result for result, _ in timed]
    trial.seconds = round(time.monotonic() - started, 1)
    # How long each document took to reach its terminal state (queue age is
    # the other half: ``queue_wait_s``, the wait before its OCR started).
    trial.detail["latency_s"] = {
        d.path.name: round(t - started, 1) for d, (_, t) in zip(docs, timed, strict=True)
    }
    for doc, sub, result in zip(docs, subs, results, strict=True):
        trial.states[doc.path.name] = result.state.value if result else "lost"
        trial.violations += await asyncio.to_thread(
            _check_doc, ctx, trial, doc, sub.sha256, tenant, result
        )
    # Each worker's /metrics now: a restart for the next scenario would reset its counters.
    for name in ("worker-io", "worker-ocr"):
        text = await asyncio.to_thread(ctx.stack.metrics, name)
        if not text:
            trial.violations.append(f"{name} /metrics could not be read: not scanned")
        trial.violations += checks.leaks(f"{name} /metrics", text, ctx.truth)
        scanned = trial.detail.setdefault("metrics_scanned_bytes", {})
        scanned[name] = len(text)
        # Counters since this worker process started (it may have served earlier trials).
        retried = trial.detail.setdefault("retries_metric_cumulative", {})
        retried[name] = checks.retries_total(text)
    for root in ctx.stack.staging_roots():
        trial.violations += await asyncio.to_thread(checks.staging_empty, root, STAGING_GRACE_S)
    return trial


async def _outcome(
    custody: CustodyClient, sha256: str, tenant: str
) -> tuple[DocumentResult | None, float]:
    """The terminal result (None if none in time) and when it was seen."""
    deadline = time.monotonic() + TRIAL_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        try:
            result = await asyncio.wait_for(wait(custody, sha256, tenant=tenant), left)
            return result, time.monotonic()
        except TimeoutError:
            break
        except RPCError:
            await asyncio.sleep(1.0)  # the server is down on purpose: ask again
    return None, time.monotonic()


def _check_doc(
    ctx: Context, trial: Trial, doc: Doc, sha256: str, tenant: str, result: DocumentResult | None
) -> list[str]:
    out = checks.terminal(sha256, result, doc.expected)
    if result is None:
        return out
    if doc.code is not None and result.code != doc.code:
        out.append(f"{sha256[:12]} code {result.code}, expected {doc.code}")
    trial.detail.setdefault("step_attempts", {})[doc.path.name] = result.attempts
    store = ctx.custody.store
    out += checks.records(store, sha256, tenant, result.state)
    # Error messages reach operators: the result (codes, transitions) and the outcome record.
    out += checks.leaks(f"result {sha256[:12]}", result.model_dump_json(), ctx.truth)
    outcome = checks.outcome_text(store, sha256, tenant)
    out += checks.leaks(f"outcome {sha256[:12]}", outcome, ctx.truth)
    text = checks.text_sha(store, sha256, tenant)
    if text is not None:
        # Determinism: the same bytes publish the same text in every trial.
        first = ctx.texts.setdefault(sha256, text)
        if text != first:
            out.append(f"{sha256[:12]} text {text[:12]} differs from earlier {first[:12]}")
    history = checks.history(ctx.stack.settings, ids.workflow_id(sha256, tenant))
    out += checks.leaks(f"history {sha256[:12]}", checks.history_text(history), ctx.truth)
    trial.attempts += checks.activity_attempts(history)
    if (waited := checks.ocr_wait_s(history)) is not None:
        trial.detail.setdefault("queue_wait_s", {})[doc.path.name] = waited
    codes: dict[str, int] = trial.detail.setdefault("retry_codes", {})
    for code in checks.retry_codes(history):
        codes[code] = codes.get(code, 0) + 1
    return out


def small_doc(ctx: Context) -> Doc:
    """The smallest real scan (640x480, one page): OCR time is most of a trial's cost."""
    return Doc(ctx.corpus / "ocr_gt" / "tess_phototest.tif")


def variants(ctx: Context, count: int, tag: str) -> list[Path]:
    """Distinct files (one TIFF tag differs) of the same scan: same text, new SHA-256s."""
    out: list[Path] = []
    with Image.open(small_doc(ctx).path) as image:
        for i in range(count):
            path = ctx.examples / f"variant-{tag}-{i}.tif"
            image.save(path, compression="group4", tiffinfo={270: f"chaos {tag} {i}"})
            out.append(path)
    return out
