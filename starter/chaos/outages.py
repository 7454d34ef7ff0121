"""Scenarios that take a dependency away: the object store, staging space, the OCR engine.

``store-outage`` runs the workers on S3 (moto's server over HTTP) and stops the
endpoint mid-batch; ``staging-full`` puts staging on a full tmpfs and frees it;
``poison-engine`` makes OCR fail on every attempt for one document of a batch
(fault point ``ocr.start=raise@<sha256>``) and compares the others' latency
with a clean batch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import math
import random
from collections.abc import Awaitable, Callable

from pydantic import SecretStr

from custody.models import DocState
from custody.stores import open_store
from custody.stores.s3 import S3Store
from starter.chaos.outside import BUCKET
from starter.chaos.trial import Context, Doc, Trial, run_trial, variants
from starter.client.connect import CustodyClient

Scenario = Callable[[Context, Trial], Awaitable[Trial]]

#: How long the S3 endpoint stays down. Before the OCR step waited out the store
#: (custody.stores.patient), from about 6 s on an outage that hit OCR outlasted
#: its three attempts and quarantined a document (docs/reliability.md, findings).
OUTAGE_S = (2.0, 8.0)
STAGING_KIB = 2048
#: Steps of a clean document: stage, validate, ocr, check, publish.
STEPS = 5


async def store_outage(ctx: Context, trial: Trial) -> Trial:
    """S3 (moto's server) stopped mid-batch, back on the same port with the same objects."""
    early = trial.index % 2 == 0
    return await outage_batch(ctx, trial, 2 + trial.index % 2, f"s3-{trial.seed}", early)


async def outage_batch(ctx: Context, trial: Trial, count: int, tag: str, early: bool) -> Trial:
    """``count`` documents at once on S3; the endpoint goes down for a few seconds meanwhile.

    ``early`` stops it within 0.3 s of submission, while every document is
    being staged, so the outage is certain to be felt; otherwise at a random
    moment 0.5-6 s in, which may fall where no step touches the store.
    """
    s3ctx = await asyncio.to_thread(_on_s3, ctx)
    endpoint = ctx.stack.s3_endpoint()
    await asyncio.to_thread(ctx.ensure, "worker-io", **endpoint.env())
    await asyncio.to_thread(ctx.ensure, "worker-ocr", **endpoint.env())
    docs = [Doc(p) for p in variants(ctx, count, tag)]

    async def inject(rng: random.Random, t: Trial) -> None:
        delay = rng.uniform(0.0, 0.3) if early else rng.uniform(0.5, 6.0)
        down = rng.uniform(*OUTAGE_S)
        await asyncio.sleep(delay)
        await asyncio.to_thread(endpoint.stop)
        try:
            await asyncio.sleep(down)
        finally:
            await asyncio.to_thread(endpoint.start)
        t.faults.append(f"S3 endpoint down at +{delay:.1f}s for {down:.1f}s, same port")
        t.detail["outage_s"] = round(down, 1)

    done = await run_trial(s3ctx, trial, docs, inject)
    # After breaker_failures consecutive store faults the store's breaker opens and
    # the attempts that follow fail CIRCUIT_OPEN without reaching S3: both are the outage.
    codes = done.detail.get("retry_codes", {})
    done.detail["store_failures_seen"] = codes.get("STORE_UNAVAILABLE", 0) + codes.get(
        "CIRCUIT_OPEN", 0
    )
    return _amplification(done, count, float(done.detail.get("outage_s", 0.0)))


def _on_s3(ctx: Context) -> Context:
    """The same context, its client on the S3 endpoint the workers will use."""
    endpoint = ctx.stack.s3_endpoint()
    settings = ctx.stack.settings.model_copy(
        update={
            "store": "s3",
            "s3_endpoint_url": endpoint.url,
            "s3_bucket": BUCKET,
            "s3_access_key_id": SecretStr("chaos"),
            "s3_secret_access_key": SecretStr("chaos"),
        }
    )
    S3Store.from_settings(settings).ensure_bucket()
    custody = CustodyClient(ctx.custody.temporal, open_store(settings), settings)
    return dataclasses.replace(ctx, custody=custody)


def _amplification(done: Trial, count: int, outage_s: float) -> Trial:
    """Queue age, and attempts against what backoff allows for one outage."""
    done.detail["queue_age_max_s"] = max(done.detail.get("queue_wait_s", {}).values(), default=0.0)
    done.detail["latency_max_s"] = max(done.detail["latency_s"].values())
    done.detail["attempts_per_document"] = round(done.attempts / count, 2)
    # An outage fails the one step each document is in until the store is back;
    # backoff doubles from 1 s, so that step tries about log2(outage)+2 times.
    # More attempts than that would be retries feeding on retries.
    bound = count * (STEPS + 2 + math.ceil(math.log2(outage_s + 1)))
    done.detail["attempt_bound"] = bound
    if done.attempts > bound:
        done.violations.append(f"{done.attempts} attempts for {count} documents > {bound}")
    return done


async def staging_full(ctx: Context, trial: Trial) -> Trial:
    """Staging on a small tmpfs, full when the batch arrives; space freed mid-batch."""
    disk = next((d for d in ctx.stack.disks if d.mounted), None)
    if disk is None:
        disk = ctx.stack.small_disk("staging", STAGING_KIB)
        if (reason := await asyncio.to_thread(disk.mount)) is not None:
            trial.detail["skipped"] = reason
            return trial
    staging = {"CUSTODY_STAGING_DIR": str(disk.path)}
    await asyncio.to_thread(ctx.ensure, "worker-io", **staging)
    await asyncio.to_thread(ctx.ensure, "worker-ocr", **staging)
    filled = await asyncio.to_thread(disk.fill)
    docs = [Doc(p) for p in variants(ctx, 1 + trial.index % 2, f"full-{trial.seed}")]

    async def inject(rng: random.Random, t: Trial) -> None:
        delay = rng.uniform(2.0, 6.0)
        await asyncio.sleep(delay)
        await asyncio.to_thread(disk.free)
        t.faults.append(f"staging tmpfs ({STAGING_KIB} KiB) full, freed at +{delay:.1f}s")

    try:
        done = await run_trial(ctx, trial, docs, inject)
    finally:
        disk.free()
    done.detail["filler_bytes"] = filled
    done.detail["staging_full_retries"] = done.detail.get("retry_codes", {}).get("STAGING_FULL", 0)
    return done


async def poison_engine(ctx: Context, trial: Trial) -> Trial:
    """OCR fails on every attempt for one document: capped, quarantined, the rest not slowed."""
    # The same bytes every trial (new tenant each time), so the worker's fault
    # configuration stays put and the OCR worker is not restarted per trial.
    poisoned = variants(ctx, 1, "engine-poison")[0]
    await asyncio.to_thread(ctx.ensure, "worker-io")
    target = hashlib.sha256(poisoned.read_bytes()).hexdigest()[:16]
    await asyncio.to_thread(ctx.ensure, "worker-ocr", f"ocr.start=raise@{target}")
    size = 1 + trial.index % 2  # one good document in the short form, two every other trial
    goods = variants(ctx, 2 * size, f"engine-{trial.seed}")
    # Baseline: the same number of good documents, no poison among them.
    clean = Trial(scenario=trial.scenario, index=trial.index, seed=trial.seed)
    clean = await run_trial(ctx, clean, [Doc(p) for p in goods[:size]])
    docs = [Doc(p) for p in goods[size:]]
    rng = random.Random(trial.seed)
    docs.insert(rng.randrange(len(docs) + 1), Doc(poisoned, DocState.QUARANTINED, "OCR_ERROR"))
    trial.faults.append("ocr.start=raise@<sha> (every OCR attempt of one document)")
    done = await run_trial(ctx, trial, docs)
    done.violations += [f"clean batch: {v}" for v in clean.violations]
    done.states.update(clean.states)
    done.attempts += clean.attempts
    latency = done.detail["latency_s"]
    good = [s for name, s in latency.items() if name != poisoned.name]
    done.detail["clean_batch_latency_max_s"] = max(clean.detail["latency_s"].values())
    done.detail["poisoned_batch_good_latency_max_s"] = max(good)
    done.detail["poison_latency_s"] = latency[poisoned.name]
    return done
