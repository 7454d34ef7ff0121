"""The fault scenarios. Each injects its fault from outside where it can.

A scenario is ``async fn(ctx, trial) -> Trial``: it chooses documents, sets the
workers up (``ctx.ensure``), and hands ``run_trial`` an injector that hurts the
stack while the documents are in flight. Timing is drawn from the trial's seed.
"""

from __future__ import annotations

import asyncio
import random
import re

from custody.models import DocState
from starter.chaos.outages import (
    Scenario,
    outage_batch,
    poison_engine,
    staging_full,
    store_outage,
)
from starter.chaos.trial import Context, Doc, Trial, run_trial, small_doc, variants

#: Corpus files a batch is poisoned with, and the verdict each must get.
POISON = {
    "js_corkami_javascript.pdf": DocState.REJECTED,
    "pillow_truncated_end_chunk.png": DocState.REJECTED,
    "qpdf_pages-loop.pdf": DocState.REJECTED,
    "bomb_spark_225000x225000.png": DocState.REJECTED,
    "zip_renamed.pdf": DocState.REJECTED,
    "encrypted_libreoffice-writer-password.pdf": DocState.REJECTED,
    "tiff_pillow_libtiff_segfault.tif": DocState.REJECTED,
    "empty_zero_bytes.pdf": DocState.REJECTED,
}


async def worker_kill(ctx: Context, trial: Trial) -> Trial:
    """SIGKILL a worker: after a page (fault point), at a random moment, or before publish."""
    mode = ("after-page", "random", "before-publish")[trial.index % 3]
    await asyncio.to_thread(ctx.ensure, "worker-io")
    faults = {"after-page": "ocr.after_page=kill"}.get(mode, "")
    await asyncio.to_thread(ctx.ensure, "worker-ocr", faults)
    if mode == "before-publish":
        await asyncio.to_thread(ctx.ensure, "worker-io", "publish.before_record=kill")

    async def inject(rng: random.Random, t: Trial) -> None:
        name = "worker-io" if mode == "before-publish" else "worker-ocr"
        if mode == "random":
            delay = rng.uniform(1.0, 12.0)
            await asyncio.sleep(delay)
            rc = await asyncio.to_thread(ctx.stack.kill, name)
            t.faults.append(f"SIGKILL {name} at +{delay:.1f}s rc={rc}")
        else:
            rc = await asyncio.to_thread(ctx.stack.wait_exit, name, 300)
            t.faults.append(f"{faults or 'publish.before_record=kill'} {name} rc={rc}")
        ctx.worker_env.pop(name, None)
        await asyncio.to_thread(ctx.ensure, name)  # a healthy replacement takes the retry

    return await run_trial(ctx, trial, [small_doc(ctx)], inject)


async def server_restart(ctx: Context, trial: Trial) -> Trial:
    """Kill the dev server mid-batch and start it again on the same SQLite file."""
    await asyncio.to_thread(ctx.ensure, "worker-io")
    await asyncio.to_thread(ctx.ensure, "worker-ocr")

    async def inject(rng: random.Random, t: Trial) -> None:
        delay, down = rng.uniform(0.5, 8.0), rng.uniform(0.5, 3.0)
        await asyncio.sleep(delay)
        before = ctx.stack.procs["temporal"].pid
        rc = await asyncio.to_thread(ctx.stack.kill, "temporal")
        await asyncio.sleep(down)
        after = await asyncio.to_thread(ctx.stack.start, "temporal")
        t.faults.append(f"SIGKILL temporal at +{delay:.1f}s rc={rc}, down {down:.1f}s")
        t.detail.update(server_pid_before=before, server_pid_after=after)

    docs = [small_doc(ctx), Doc(ctx.examples / "referral.png")]
    return await run_trial(ctx, trial, docs, inject)


async def poison(ctx: Context, trial: Trial) -> Trial:
    """Hostile files mixed into a batch: each gets its verdict; the good one publishes."""
    await asyncio.to_thread(ctx.ensure, "worker-io")
    await asyncio.to_thread(ctx.ensure, "worker-ocr")
    rng = random.Random(trial.seed)
    picked = rng.sample(sorted(POISON), 3)
    docs = [Doc(ctx.corpus / "bad_inputs" / n, POISON[n]) for n in picked]
    docs.insert(rng.randrange(len(docs) + 1), small_doc(ctx))
    trial.faults += [f"poison {n}" for n in picked]
    return await run_trial(ctx, trial, docs)


async def hung_page(ctx: Context, trial: Trial) -> Trial:
    """A page that stops heartbeating: the attempt is abandoned, a retry publishes once."""
    rng = random.Random(trial.seed)
    hang = rng.uniform(47.0, 52.0)  # past the 45 s OCR heartbeat timeout and its 2 s backoff
    await asyncio.to_thread(ctx.ensure, "worker-io")
    # Two slots, so the retry runs while the abandoned attempt is still stuck.
    await asyncio.to_thread(
        ctx.ensure,
        "worker-ocr",
        f"ocr.hang={hang:.0f}",
        CUSTODY_OCR_PAGE_DEADLINE_S="2",
        CUSTODY_OCR_CONCURRENCY="2",
    )
    done = await run_trial(ctx, trial, [small_doc(ctx)])
    log = ctx.stack.log_path("worker-ocr").read_text(errors="replace")
    hangs = len(re.findall(r'"point": ?"ocr.hang"', log))
    done.faults.append(f"ocr.hang={hang:.0f}s (hung pages so far: {hangs})")
    done.detail["hung_pages"] = hangs
    return done


async def burst(ctx: Context, trial: Trial) -> Trial:
    """Many documents at once: queue age is reported; an S3 outage's retries do not amplify."""
    count = 3 + trial.index % 4
    trial.faults.append(f"burst of {count}")
    if trial.index % 2 == 0:
        # On S3, whose endpoint stops mid-burst: attempts are held to what backoff allows.
        early = trial.index % 4 == 0
        return await outage_batch(ctx, trial, count, f"burst-{trial.seed}", early)
    await asyncio.to_thread(ctx.ensure, "worker-io")
    await asyncio.to_thread(ctx.ensure, "worker-ocr")
    docs = [Doc(p) for p in variants(ctx, count, f"burst-{trial.seed}")]
    done = await run_trial(ctx, trial, docs)
    done.detail["queue_age_max_s"] = max(done.detail.get("queue_wait_s", {}).values(), default=0.0)
    done.detail["latency_max_s"] = max(done.detail["latency_s"].values())
    # Five activities a document (stage, validate, ocr, check, publish) and no fault
    # injected: any attempt beyond that is a retry the burst itself caused.
    if done.attempts > 5 * count:
        done.violations.append(f"{done.attempts} activity attempts for {count} documents")
    return done


SCENARIOS: dict[str, Scenario] = {
    "worker-kill": worker_kill,
    "server-restart": server_restart,
    "poison": poison,
    "hung-page": hung_page,
    "burst": burst,
    "store-outage": store_outage,
    "staging-full": staging_full,
    "poison-engine": poison_engine,
}
