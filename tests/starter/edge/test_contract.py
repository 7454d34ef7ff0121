"""The OpenAPI document against a real ``custody serve``: Schemathesis finds nothing.

The edge runs as the CLI runs it (its own process, uvicorn on a free loopback
port, a Temporal dev server behind it, and both workers, in this process, for
previews: the OCR worker with the quick stand-in engine, since the contract
is about the edge's answers, not the text) and Schemathesis fuzzes it from
the document it serves, with every check on. A constraint the server enforces and
the document does not state (a header pattern, a maximum) shows up here as a
schema-valid request the server refuses, or a refusal the document never lists.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from custody.limits import PolicyLimits
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.edge import tenants
from starter.edge.openapi import document
from starter.edge.scopes import MINTABLE
from tests.helpers import make_settings, running_pipeline
from tests.starter.edge.conftest import QuickEngine, png

# Examples per operation and phase: a short form in every ``make test``; the long
# form (``slow``, which CI adds) takes 15-30 s more on two cores.
MAX_EXAMPLES = (10, pytest.param(40, marks=pytest.mark.slow))
_START_TIMEOUT_S = 30.0
_SEED = os.environ.get("CUSTODY_SCHEMATHESIS_SEED", "")
#: The repository's own configuration: what the edge answers by design, and why
#: (a reused Idempotency-Key with another body is 422, as the IETF draft says).
ROOT_CONFIG = Path(__file__).resolve().parents[3] / "schemathesis.toml"
# This run only: a document that exists, so reads reach the 200 answer and its schema.
_RUN_CONFIG = """
[[operations]]
include-name = "GET /v1/documents/{sha256}"
parameters = { "path.sha256" = "%s" }
"""


def _script(name: str) -> str:
    """A console script of this virtualenv (``custody``, ``schemathesis``)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found is not None, f"{name} is not installed beside {sys.executable}"
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"custody serve exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"custody serve did not answer within {_START_TIMEOUT_S} s")


@pytest.fixture
async def served_edge(
    tmp_path: Path, temporal_address: str, temporal_client: Client
) -> AsyncIterator[tuple[str, str]]:
    """``custody serve`` in a child process, the workers here: its base URL and an API key."""
    settings = make_settings(tmp_path / "home", temporal_address)
    store = LocalStore(settings.objects_dir)
    _, key = tenants.add(store, "contract", scopes=MINTABLE)  # every route's scope
    port = _free_port()
    env = {
        **os.environ,
        "CUSTODY_HOME": str(settings.home),
        "CUSTODY_TEMPORAL_ADDRESS": temporal_address,
        "CUSTODY_IO_TASK_QUEUE": settings.io_task_queue,
        "CUSTODY_OCR_TASK_QUEUE": settings.ocr_task_queue,
        # The tenant record above is a signed state version: the server must hold
        # the key that signed it (this process's), as one deployment's roles do.
        "CUSTODY_SIGNING_DIR": str(Settings().signing_path),
        "CUSTODY_ALLOW_PLAINTEXT": "true",  # no keys here: the edge's SDK would refuse (#26)
    }
    argv = [_script("custody"), "serve", "--port", str(port)]
    proc = subprocess.Popen(argv, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        await asyncio.to_thread(_wait_until_up, f"{base}/openapi.json", proc)
        async with running_pipeline(temporal_client, settings, QuickEngine(), store=store):
            yield base, key
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _upload_one(base: str, key: str) -> str:
    """Upload one real PNG (its workflow waits: no workers); its SHA-256."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "image/png"}
    resp = httpx.put(f"{base}/v1/documents", content=png(17), headers=headers)
    assert resp.status_code == 202, resp.text
    sha: str = resp.json()["sha256"]
    return sha


@pytest.mark.parametrize("examples", MAX_EXAMPLES)
async def test_edge_contract_schemathesis_finds_nothing(
    served_edge: tuple[str, str], tmp_path: Path, examples: int
) -> None:
    """Every check of Schemathesis, over every operation, passes against the served document."""
    base, key = served_edge
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        ROOT_CONFIG.read_text() + _RUN_CONFIG % await asyncio.to_thread(_upload_one, base, key)
    )
    argv = [
        _script("schemathesis"),
        "--config-file",
        str(config),
        "run",
        f"{base}/openapi.json",
        "--header",
        f"Authorization: Bearer {key}",
        "--checks",
        "all",
        "--max-examples",
        str(examples),
        # Deterministic by default; CUSTODY_SCHEMATHESIS_SEED=N runs another seed's cases.
        *(["--seed", _SEED] if _SEED else ["--generation-deterministic"]),
        # Not stateful: about 50 s on its own here, over links Schemathesis infers.
        "--phases",
        "examples,coverage,fuzzing",
        "--workers",
        "1",
        "--no-color",
        "--output-sanitize",
        "true",
    ]
    # In a thread: the workers answering the previews run on this test's event loop.
    run = await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_openapi_document_states_the_deployments_limits() -> None:
    """The page maximum and byte limit in the document are the limits it was built for."""
    spec = document(PolicyLimits(max_pages=7, max_bytes=1234))
    upload = spec["paths"]["/v1/documents"]["post"]
    pages = next(p for p in upload["parameters"] if p["name"] == "Custody-Page-Count")
    assert pages["schema"] == {"type": "integer", "minimum": 1, "maximum": 7}
    assert "at most 1234 bytes" in upload["description"]


def test_schemathesis_config_is_found_from_the_repository_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run from the repository, Schemathesis loads its ``schemathesis.toml``, 422 expected."""
    from schemathesis.config import SchemathesisConfig

    monkeypatch.chdir(ROOT_CONFIG.parent)
    found = SchemathesisConfig.discover()
    assert found.config_path == str(ROOT_CONFIG)
    assert "IDEMPOTENCY_KEY_REUSED" in ROOT_CONFIG.read_text()
