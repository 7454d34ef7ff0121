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

from temporalio.service import RPCError

from custody import ids
from custody.models import DocState, DocumentResult
from starter.api import CustodyClient, submit, wait
from starter.chaos import checks
from starter.chaos.harness import ChaosStack

#: A trial's documents must be terminal within this, faults included.
TRIAL_TIMEOUT_S = 420.0
#: An abandoned attempt may still hold its staged copy this long after the winner.
STAGING_GRACE_S = 30.0


@dataclass(frozen=True)
class Doc:
    path: Path
    expected: DocState = DocState.PUBLISHED


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
    # Queue age: how long the oldest accepted document waited for its terminal state.
    trial.detail["latency_s"] = {
        d.path.name: round(t - started, 1) for d, (_, t) in zip(docs, timed, strict=True)
    }
    for doc, sub, result in zip(docs, subs, results, strict=True):
        trial.states[doc.path.name] = result.state.value if result else "lost"
        trial.violations += await asyncio.to_thread(
            _check_doc, ctx, trial, doc, sub.sha256, tenant, result
        )
    trial.violations += await asyncio.to_thread(
        checks.staging_empty, ctx.stack.settings, STAGING_GRACE_S
    )
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
    store = ctx.custody.store
    out += checks.records(store, sha256, tenant, result.state)
    text = checks.text_sha(store, sha256, tenant)
    if text is not None:
        # Determinism: the same bytes publish the same text in every trial.
        first = ctx.texts.setdefault(sha256, text)
        if text != first:
            out.append(f"{sha256[:12]} text {text[:12]} differs from earlier {first[:12]}")
    history = checks.history(ctx.stack.settings, ids.workflow_id(sha256, tenant))
    out += checks.leaks(f"history {sha256[:12]}", checks.history_text(history), ctx.truth)
    trial.attempts += checks.activity_attempts(history)
    return out
