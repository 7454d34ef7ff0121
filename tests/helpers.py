"""Test helpers: a running pipeline on fresh task queues, and engine doubles.

Engine doubles exist only to inject faults or count calls; the tests that use
them say so. Everything else runs on the real parts.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import numpy as np
from temporalio.client import Client

from activities.engines.base import OcrEngine
from activities.scratch import StagingArea
from custody import egress as eg
from custody.models import PageText
from custody.settings import Settings
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from workers.io import build_io_worker
from workers.ocr import build_ocr_worker


def make_settings(home: Path, address: str, **overrides: Any) -> Settings:
    """Fresh task queues under ``home``; a deployment without keys unless it makes some
    (``allow_plaintext``: the in-process workers here run without a keyring)."""
    q = uuid4().hex[:10]
    return Settings(
        home=home,
        temporal_address=address,
        io_task_queue=f"io-{q}",
        ocr_task_queue=f"ocr-{q}",
        **{"allow_plaintext": True, **overrides},
    )


@asynccontextmanager
async def running_pipeline(
    client: Client,
    settings: Settings,
    engine: OcrEngine,
    *,
    store: ObjectStore | None = None,
    with_ocr_worker: bool = True,
    with_io_worker: bool = True,
) -> AsyncIterator[CustodyClient]:
    """The workers in this process, on the settings' task queues."""
    store = store or LocalStore(settings.objects_dir)
    area = StagingArea(settings.staging_path)
    async with AsyncExitStack() as stack:
        if with_io_worker:
            await stack.enter_async_context(build_io_worker(client, settings, store, area))
        if with_ocr_worker:
            ocr = build_ocr_worker(client, settings, store, area, engine)
            await stack.enter_async_context(ocr)
        yield CustodyClient(temporal=client, store=store, settings=settings)


@dataclass(frozen=True)
class Rig:
    """What a test of the running pipeline needs: the dev server, a home of its own,
    the session's engine, the corpus and a tenant of its own (the ``rig`` fixture)."""

    client: Client
    address: str
    home: Path
    engine: OcrEngine
    corpus: Path
    tenant: str

    def settings(self, **overrides: Any) -> Settings:
        """Settings on fresh task queues under this test's home."""
        return make_settings(self.home, self.address, **overrides)

    def pipeline(
        self, settings: Settings, engine: OcrEngine | None = None, **options: Any
    ) -> AbstractAsyncContextManager[CustodyClient]:
        """``running_pipeline`` on this rig's server, with its engine unless given another."""
        return running_pipeline(self.client, settings, engine or self.engine, **options)

    def scan(self, name: str = "tess_phototest.tif") -> bytes:
        """The bytes of one corpus scan (the small Tesseract test page by default)."""
        return (self.corpus / "ocr_gt" / name).read_bytes()


async def spawn_worker(
    module: str, settings: Settings, log: Path, faults: str = ""
) -> asyncio.subprocess.Process:
    """``python -m MODULE`` as its own process on the settings' queues and home.

    ``faults`` sets the documented fault points (CUSTODY_FAULTS) for that process only.
    """
    env = {
        **os.environ,
        "CUSTODY_HOME": str(settings.home),
        "CUSTODY_TEMPORAL_ADDRESS": settings.temporal_address,
        "CUSTODY_IO_TASK_QUEUE": settings.io_task_queue,
        "CUSTODY_OCR_TASK_QUEUE": settings.ocr_task_queue,
        "CUSTODY_LOG_FORMAT": "json",
        "CUSTODY_FAULTS": faults,
    }
    with log.open("wb") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, env=env, stdout=out, stderr=out
        )


class CountingEngine:
    """The real engine, counting the pages it is asked to recognise."""

    def __init__(self, inner: OcrEngine) -> None:
        self.inner = inner
        self.calls = 0
        self._lock = threading.Lock()
        self.name, self.version = inner.name, inner.version

    def params(self) -> dict[str, str | int | float | bool]:
        return self.inner.params()

    def model_hashes(self) -> dict[str, str]:
        return self.inner.model_hashes()

    def recognise(self, image: np.ndarray, page: int) -> PageText:
        with self._lock:
            self.calls += 1
        return self.inner.recognise(image, page)


class StandInEngine:
    """A stand-in engine's fixed parts (no parameters, no model files); each subclass says
    what a page reads and why a test stands it in for the real engine."""

    name, version = "stand-in", "0"

    def params(self) -> dict[str, str | int | float | bool]:
        return {}

    def model_hashes(self) -> dict[str, str]:
        return {}


class FailingEngine(CountingEngine):
    """Fault injection: every recognition raises, as a crashing OCR library would."""

    def recognise(self, image: np.ndarray, page: int) -> PageText:
        with self._lock:
            self.calls += 1
        raise RuntimeError("injected OCR fault")


def cli(settings: Settings, *args: str, tenant: str | None = None) -> tuple[int, Any]:
    """``custody ARGS --json`` in this process: the registry's parser and handler, ``settings``
    as given, stdout captured; its exit status and its JSON answer (None if it printed none)."""
    from starter.cli.main import run
    from starter.cli.output import captured

    words = [*args, "--json", *(["--tenant", tenant] if tenant else [])]
    out = io.StringIO()
    with captured(out):
        code = run(words, settings)
    try:
        return code, json.loads(out.getvalue()) if out.getvalue().strip() else None
    except json.JSONDecodeError:
        raise AssertionError(f"not JSON (rc={code}): {out.getvalue()!r}") from None


async def custody_cli(settings: Settings, *args: str, tenant: str | None = None) -> tuple[int, Any]:
    """:func:`cli` on a thread, so the loop the workers run on keeps running meanwhile."""
    return await asyncio.to_thread(cli, settings, *args, tenant=tenant)


async def custody_subprocess(
    settings: Settings, *args: str, tenant: str | None = None
) -> tuple[int, Any]:
    """``python -m starter.cli.main ARGS --json``: for the tests of the subprocess contract
    (exit statuses, one JSON document on stdout); every other test runs :func:`cli`."""
    env = {
        **os.environ,
        "CUSTODY_HOME": str(settings.home),
        "CUSTODY_TEMPORAL_ADDRESS": settings.temporal_address,
        "CUSTODY_IO_TASK_QUEUE": settings.io_task_queue,
        "CUSTODY_OCR_TASK_QUEUE": settings.ocr_task_queue,
        "CUSTODY_ALLOW_PLAINTEXT": str(settings.allow_plaintext).lower(),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starter.cli.main",
        *args,
        "--json",
        *(["--tenant", tenant] if tenant else []),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=300)
    assert proc.returncode is not None
    try:
        return proc.returncode, json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        raise AssertionError(f"not JSON (rc={proc.returncode}): {out!r} {err!r}") from None


def recipient(
    tenant: str | None,
    name: str,
    target: str | Path,
    kind: eg.ChannelKind = eg.ChannelKind.OUTBOX,
) -> eg.Recipient:
    """A recipient registration as an operator makes it (an outbox folder by default)."""
    return eg.Recipient(
        name=name,
        tenant=tenant,
        kind=kind,
        target=str(target),
        created_at=datetime.now(UTC),
        created_by="test",
    )


async def publish_scan(
    custody: CustodyClient, corpus: Path, tenant: str, name: str = "tess_phototest.tif"
) -> str:
    """Submit one corpus scan and wait for it; its SHA-256 (the caller checks the state)."""
    sub = await submit(custody, corpus / "ocr_gt" / name, tenant=tenant)
    await wait(custody, sub.sha256, tenant=tenant)
    return sub.sha256


def loaded_by(statement: str, roots: tuple[str, ...], prefixes: tuple[str, ...] = ()) -> list[str]:
    """The modules a fresh interpreter holds after ``statement`` that are in the packages
    ``roots`` or start with one of ``prefixes``: what a caller's process loads."""
    probe = (
        f"import sys; {statement}; "
        f"print('\\n'.join(m for m in sys.modules if m.split('.')[0] in {roots!r} "
        f"or m.startswith({prefixes!r})))"
    )
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout.split()
