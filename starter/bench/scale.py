"""``custody bench scale``: pages per minute with 1, then 2, OCR worker processes.

One throwaway stack of separate processes (``starter.chaos.harness``: the
Temporal dev server, one I/O worker, one OCR worker), then a second OCR worker
process on the same queue. Each round submits the same handful of corpus pages
under a fresh tenant, all at once, and reports:

- ``pages_per_minute``: pages over the round's wall time, submit to last published;
- ``queue``: the OCR task queue's backlog as Temporal reports it (the figure
  KEDA scales on), sampled every half second: peak count and peak age;
- ``time``: where each document's seconds went, from its workflow history:
  waiting in the OCR queue (scheduled -> started), in the OCR activity, and the
  rest (staging, validation, check, publish, workflow tasks);
- ``ocr_cpu_seconds_per_page``: CPU the OCR worker processes and their engine
  helpers used per page, so ``pages_per_core_minute`` holds on any core count;
- ``rss_mb``: each worker's peak resident memory, helpers included.

Measured figures and the capacity model built on them: deploy/CAPACITY.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import uuid4

from custody.errors import Code
from custody.models import DocState
from custody.settings import Settings
from starter.bench.scale_probe import Probe, history_split, tree_cpu_s
from starter.cli.output import Exit, emit, fail
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait

#: One lane per worker, unpinned: two workers on two cores must not share one.
_WORKER_ENV = {"CUSTODY_OCR_CONCURRENCY": "1", "CUSTODY_ENGINE_CPUS": "off"}
_DONE_S = 600.0
_SCANS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pdf")


def default_corpus() -> Path:
    """The research corpus's OCR pages (``CUSTODY_CORPUS`` names another corpus root)."""
    root = os.environ.get("CUSTODY_CORPUS")
    base = Path(root) if root else Path(__file__).resolve().parents[3] / "shared" / "corpus"
    return base / "ocr_gt"


def documents(corpus: Path, limit: int) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if p.suffix.lower() in _SCANS)[:limit]


def run(args: argparse.Namespace, settings: Settings) -> int:
    corpus = args.corpus or default_corpus()
    docs = documents(corpus, args.docs) if corpus.is_dir() else []
    if not docs:
        return fail(args.json, Code.USAGE, f"no scans under {corpus}", Exit.USAGE)
    report = asyncio.run(_measure(docs, args.workers))
    emit(args, report, _text(report))
    return Exit.OK


async def _measure(docs: list[Path], most: int) -> dict[str, Any]:
    from starter.chaos.harness import ChaosStack

    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="custody-scale-") as tmp:
        stack = ChaosStack(Path(tmp) / "home", env=_WORKER_ENV)
        extra: list[subprocess.Popen[bytes]] = []
        try:
            for name in ("temporal", "worker-io", "worker-ocr"):
                await asyncio.to_thread(stack.start, name)
            client = await CustodyClient.connect(stack.settings)
            ocr_pids = [stack.procs["worker-ocr"].pid]
            for workers in range(1, most + 1):
                if workers > 1:
                    extra.append(await asyncio.to_thread(_another_ocr_worker, stack, workers))
                    ocr_pids.append(extra[-1].pid)
                pids = {"worker-io": stack.procs["worker-io"].pid} | {
                    f"worker-ocr-{n + 1}": pid for n, pid in enumerate(ocr_pids)
                }
                rounds.append(await _round(client, docs, workers, pids))
        finally:
            for proc in extra:
                proc.terminate()
                proc.wait(timeout=30)
            await asyncio.to_thread(stack.close)
    return _summary(rounds)


def _another_ocr_worker(stack: Any, n: int) -> subprocess.Popen[bytes]:
    """A further OCR worker process on the same queue, its log beside the others."""
    from starter.chaos.harness import REPO

    log = stack.home / "logs" / f"worker-ocr-{n}.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            stack.service("worker-ocr").argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=stack.env(),
            start_new_session=True,
            cwd=REPO,
        )
    deadline = time.monotonic() + 240
    while b"worker_started" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"OCR worker {n} did not start; see {log}")
        time.sleep(0.3)
    return proc


async def _round(
    client: CustodyClient, docs: list[Path], workers: int, pids: dict[str, int]
) -> dict[str, Any]:
    tenant = f"bench-scale-{uuid4().hex[:8]}"
    ocr = [pid for name, pid in pids.items() if name.startswith("worker-ocr")]
    cpu_before = sum(tree_cpu_s(pid) for pid in ocr)
    async with Probe(client, pids) as probe:
        started = time.perf_counter()
        subs = [await submit(client, path, tenant=tenant) for path in docs]
        waits = (wait(client, s.sha256, tenant=tenant) for s in subs)
        results = await asyncio.wait_for(asyncio.gather(*waits), _DONE_S)
        seconds = time.perf_counter() - started
    cpu = sum(tree_cpu_s(pid) for pid in ocr) - cpu_before
    pages = sum(r.pages for r in results)
    splits = [await history_split(client, s.sha256, tenant) for s in subs]
    return {
        "ocr_workers": workers,
        "documents": len(docs),
        "pages": pages,
        "published": sum(r.state == DocState.PUBLISHED for r in results),
        "seconds": round(seconds, 2),
        "pages_per_minute": round(pages / seconds * 60, 2),
        "ocr_cpu_seconds_per_page": round(cpu / pages, 3) if pages else None,
        "queue": probe.queue(),
        "time": _medians(splits),
        "rss_mb": probe.rss(),
    }


def _medians(splits: list[dict[str, float]]) -> dict[str, float]:
    keys = ("queue_wait_s", "ocr_s", "other_s", "total_s")
    return {f"median_{k}": round(statistics.median(s[k] for s in splits), 3) for k in keys}


def _summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    first, last = rounds[0], rounds[-1]
    cpu = statistics.median(r["ocr_cpu_seconds_per_page"] for r in rounds)
    return {
        "cores": os.cpu_count(),
        "rounds": rounds,
        "speedup": round(last["pages_per_minute"] / first["pages_per_minute"], 2),
        "pages_per_core_minute": round(60 / cpu, 2) if cpu else None,
    }


def _text(report: dict[str, Any]) -> str:
    lines = [f"cores {report['cores']}, pages per core-minute {report['pages_per_core_minute']}"]
    for r in report["rounds"]:
        lines.append(
            f"{r['ocr_workers']} OCR worker(s): {r['pages']} pages in {r['seconds']} s = "
            f"{r['pages_per_minute']} pages/min; queue peak {r['queue']['peak_backlog']} "
            f"(age {r['queue']['peak_age_s']} s); median s: {r['time']}"
        )
    lines.append(f"speedup {report['speedup']}x")
    return "\n".join(lines)
