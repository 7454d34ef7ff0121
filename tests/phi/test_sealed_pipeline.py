"""Real documents through a sealed pipeline: no text where it could be read.

A dev server of this module's own (a ``temporal server start-dev`` process
whose SQLite file and log are searched), the I/O and OCR workers as their own
processes (JSON logs at DEBUG, as deployed, captured to files), the encrypting
converter and the sealed store. The payload key is rotated after the first two
thirds of the documents (the workers restart, as after a deploy).

Documents: a representative subset by default (5 documents, 6 pages: a TIFF,
two receipts, a form and the two-page PDF), every document of
``corpus/ocr_gt`` with ``CUSTODY_PHI_CORPUS=all`` (21 documents, 22 pages).
Needles: every ground-truth line of 8 characters or more (shorter lines such
as ``TOTAL:`` or ``Date`` are common words, not a patient's text) and every
recognised line of 12 or more, each as raw UTF-8 and JSON-escaped. Searched:
the SQLite file with its WAL, histories from ``fetch_history()`` and from the
``temporal`` CLI, every raw object, the staging folder, and every log (the
server's and both workers').
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import uvicorn
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from custody.converter import data_converter
from custody.errors import Code
from custody.keys import keyring as keys
from custody.keys.codec import ENCODING, KEY_ID
from custody.keys.keyring import Keyring, TenantShredded
from custody.models import DocState
from custody.queues import SEARCH_ATTRIBUTES
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from starter.local.codec_server import create_app
from starter.local.stack import temporal_binary
from tests.helpers import make_settings, spawn_worker
from workers.versioning import WORKFLOWS
from workflows.document import DocumentWorkflow

SUBSET = (
    "tess_phototest.tif",
    "sroie_041.jpg",
    "funsd_82092117.png",
    "funsdpdf_2pages_86220490_86328049.pdf",
    "sroie_167.jpg",
)
TOKEN = "phi-test-token-0123456789-abcdefgh"
SAVED_HISTORIES = Path(__file__).parents[1] / "workflows" / "histories"
MIN_TRUTH_LINE = 8
MIN_RECOGNISED_LINE = 12


@dataclass
class Doc:
    name: str
    tenant: str
    source_id: str
    sha256: str
    workflow_id: str
    text: str
    needles: list[bytes]
    rotated: bool


@dataclass
class Run:
    db: Path
    address: str
    home: Path
    keys_dir: Path
    logs: Path
    docs: list[Doc]
    first_kid: str
    rotated_kid: str
    seconds: float
    needles: set[bytes] = field(default_factory=set)

    def leaks(self, raw: bytes) -> list[str]:
        """Needles found in ``raw`` (their first 20 characters, to name them in a failure)."""
        return sorted({n[:20].decode(errors="replace") for n in self.needles if n in raw})


def _documents(corpus: Path) -> list[Path]:
    if os.environ.get("CUSTODY_PHI_CORPUS") == "all":
        return sorted(p for p in (corpus / "ocr_gt").iterdir() if p.suffix != ".txt" and
                      p.with_suffix(".txt").exists())  # fmt: skip
    return [corpus / "ocr_gt" / name for name in SUBSET]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    argv = [str(temporal_binary()), "server", "start-dev", "--db-filename", str(db)]
    argv += ["--ip", "127.0.0.1", "--port", str(port), "--headless", "--log-level", "info"]
    for name in SEARCH_ATTRIBUTES:
        argv += ["--search-attribute", f"{name}=Keyword"]
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


async def _connect(address: str, ring: Keyring) -> Client:
    deadline = time.monotonic() + 60
    while True:
        try:
            return await Client.connect(address, data_converter=data_converter(ring))
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def _workers(settings: Settings, logs: Path, round_: int) -> list[Any]:
    # DEBUG: the strictest the workers can be asked to log.
    os.environ["CUSTODY_LOG_LEVEL"] = "DEBUG"
    try:
        return [
            await spawn_worker(m, settings, logs / f"{m.split('.')[1]}-{round_}.log")
            for m in ("workers.io", "workers.ocr")
        ]
    finally:
        del os.environ["CUSTODY_LOG_LEVEL"]


async def _stop(procs: list[Any]) -> None:
    for proc in procs:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            await asyncio.wait_for(proc.wait(), 60)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@pytest.fixture(scope="module")
async def sealed_run(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> AsyncIterator[Run]:
    base = tmp_path_factory.mktemp("phi")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    settings = make_settings(base / "home", address)
    keys_dir = keys.keys_dir(settings)
    ring = keys.init_keyring(keys_dir, development=True)
    logs = base / "logs"
    logs.mkdir()
    db = base / "temporal.db"
    server = _start_server(db, port, logs / "temporal.log")
    paths = _documents(corpus)
    split = max(1, len(paths) * 2 // 3)
    tenants = tuple(f"{c}{uuid4().hex[:10]}" for c in "abc")
    started = time.monotonic()
    procs: list[Any] = []
    try:
        client = await _connect(address, ring)
        procs = await _workers(settings, logs, 1)
        docs = await _process(client, ring, settings, paths[:split], tenants, rotated=False)
        await _stop(procs)
        rotated_kid = keys.rotate(keys_dir)
        fresh = keys.require_dir_keyring(keys_dir)  # what the restarted workers load
        procs = await _workers(settings, logs, 2)
        client = await _connect(address, fresh)
        docs += await _process(client, fresh, settings, paths[split:], tenants, rotated=True)
        seconds = time.monotonic() - started
        await _stop(procs)
        needles = {n for d in docs for n in d.needles}
        first = min(fresh.payload)
        yield Run(db, address, settings.home, keys_dir, logs, docs, first, rotated_kid, seconds,
                  needles)  # fmt: skip
    finally:
        await _stop(procs)
        server.terminate()
        server.wait(30)


async def _process(
    client: Client,
    ring: Keyring,
    settings: Settings,
    paths: list[Path],
    tenants: tuple[str, ...],
    *,
    rotated: bool,
) -> list[Doc]:
    """Submit every document at once (the OCR worker takes them at its own pace), then wait."""
    store = SealedStore(LocalStore(settings.objects_dir), ring)
    custody = CustodyClient(temporal=client, store=store, settings=settings)
    subs = []
    for i, path in enumerate(paths):
        tenant = tenants[i % len(tenants)]
        source_id = f"src-{len(subs) + (100 if rotated else 0)}"
        subs.append((path, tenant, source_id, await submit(custody, path, tenant=tenant,
                                                            source_id=source_id)))  # fmt: skip
    docs = []
    for path, tenant, source_id, sub in subs:
        # Bounded: a worker that died must fail the run, not hang CI.
        res = await asyncio.wait_for(wait(custody, sub.sha256, tenant=tenant), 600)
        assert res.state is DocState.PUBLISHED and res.text_key, (path.name, res.code)
        text = store.get(res.text_key).decode()
        truth = path.with_suffix(".txt").read_text()
        needles = _needles(truth, text)
        docs.append(
            Doc(path.name, tenant, source_id, sub.sha256, sub.workflow_id, text, needles, rotated)
        )
    return docs


def _needles(truth: str, text: str) -> list[bytes]:
    lines = {ln.strip() for ln in truth.splitlines() if len(ln.strip()) >= MIN_TRUTH_LINE}
    lines |= {ln.strip() for ln in text.splitlines() if len(ln.strip()) >= MIN_RECOGNISED_LINE}
    forms = {ln.encode() for ln in lines} | {json.dumps(ln)[1:-1].encode() for ln in lines}
    return sorted(forms)


def _payloads(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:  # type: ignore[type-arg]
    """Every Payload (a dict with metadata.encoding) in a history's JSON, with its path."""
    if isinstance(node, dict):
        if "encoding" in node.get("metadata", {}):
            yield path, node
        for key, value in node.items():
            yield from _payloads(value, (*path, key))
    elif isinstance(node, list):
        for value in node:
            yield from _payloads(value, path)


def _assert_sealed_history(history_json: dict, run: Run) -> set[str]:  # type: ignore[type-arg]
    """No needle in the JSON or in any payload's bytes; every non-search-attribute payload
    is encrypted. Returns the key IDs seen."""
    blob = json.dumps(history_json).encode()
    kids: set[str] = set()
    count = 0
    for path, payload in _payloads(history_json):
        data = base64.b64decode(payload.get("data", ""))
        assert not run.leaks(data), path
        if "searchAttributes" in path:
            continue  # hashes, states, codes, tenant ids: indexed, so never encrypted
        if "patch-data" in path:  # a patch marker, written by the SDK's core: only its id
            assert set(json.loads(data)) == {"id", "deprecated"}, path
            continue
        count += 1
        assert base64.b64decode(payload["metadata"]["encoding"]) == ENCODING, path
        kids.add(base64.b64decode(payload["metadata"][KEY_ID]).decode())
    assert count > 0
    assert not run.leaks(blob)
    return kids


def test_phi_needles_are_real_text(sealed_run: Run) -> None:
    """The searched lines exist: each document has recognised lines of 12+ characters,
    and the run's figures are printed (pytest -s) for docs/phi.md."""
    for doc in sealed_run.docs:
        recognised = [n for n in doc.needles if n.decode() in doc.text]
        assert recognised, doc.name
    print(f"\nphi run: {len(sealed_run.docs)} documents, {len(sealed_run.needles)} needles, "
          f"{sealed_run.seconds:.0f} s")  # fmt: skip


async def test_phi_fetched_histories_are_encrypted(sealed_run: Run) -> None:
    """``fetch_history()`` JSON carries ciphertext only, under the key current at the time."""
    client = await Client.connect(sealed_run.address)  # no codec: what a reader of the DB sees
    for doc in sealed_run.docs:
        history = await client.get_workflow_handle(doc.workflow_id).fetch_history()
        kids = _assert_sealed_history(history.to_json_dict(), sealed_run)
        expected = sealed_run.rotated_kid if doc.rotated else sealed_run.first_kid
        assert kids == {expected}


def test_phi_temporal_cli_history_is_encrypted(sealed_run: Run) -> None:
    """``temporal workflow show --output json`` shows no plaintext for any document."""
    for doc in sealed_run.docs:
        shown = _show(sealed_run, doc.workflow_id)
        assert shown.returncode == 0, shown.stderr[-500:]
        assert b"workflowExecutionStartedEventAttributes" in shown.stdout
        _assert_sealed_history(json.loads(shown.stdout), sealed_run)


def test_phi_sqlite_file_holds_no_plaintext(sealed_run: Run) -> None:
    """The dev server's SQLite file (and its WAL) has workflow IDs but no document text."""
    files = [p for p in sealed_run.db.parent.glob(sealed_run.db.name + "*") if p.is_file()]
    raw = b"".join(p.read_bytes() for p in files)
    assert all(d.workflow_id.encode() in raw for d in sealed_run.docs)  # the right file
    assert not sealed_run.leaks(raw)


def test_phi_object_store_and_staging_hold_no_plaintext(sealed_run: Run) -> None:
    """Every raw object file is needle-free, and staging kept no file at all."""
    objects = [p for p in (sealed_run.home / "objects").rglob("*") if p.is_file()]
    assert len(objects) >= 3 * len(sealed_run.docs)
    for path in objects:
        assert not sealed_run.leaks(path.read_bytes()), path.name
    staging = sealed_run.home / "staging"
    assert staging.is_dir()  # it was used: the workers staged every document there
    staged = [p for p in staging.rglob("*") if p.is_file()]
    assert staged == []


def test_phi_logs_hold_no_plaintext(sealed_run: Run) -> None:
    """The server's and both workers' logs (DEBUG, before and after the restart) hold
    workflow IDs but no recognised or ground-truth line, and no file name."""
    logs = {p.name: p.read_bytes() for p in sealed_run.logs.iterdir()}
    assert set(logs) == {"temporal.log", "io-1.log", "ocr-1.log", "io-2.log", "ocr-2.log"}
    assert all(
        b'"event": "activity"' in logs[f"{k}-{r}.log"] for k in ("io", "ocr") for r in (1, 2)
    )
    raw = b"".join(logs.values())
    assert all(d.workflow_id.encode() in raw for d in sealed_run.docs)
    assert not sealed_run.leaks(raw)
    assert not [d.name for d in sealed_run.docs if Path(d.name).stem.encode() in raw]


async def test_phi_ids_search_attributes_and_memos_carry_no_text(sealed_run: Run) -> None:
    """Over every document: the workflow ID is doc-<tenant>-<sha256>, each search attribute a
    hash, state, code, tenant or source id, the memo empty, the summary hashes and counts."""
    ring = keys.require_dir_keyring(sealed_run.keys_dir)
    client = await Client.connect(sealed_run.address, data_converter=data_converter(ring))
    codes = {c.value for c in Code} | {s.value for s in DocState} | {""}
    for doc in sealed_run.docs:
        assert doc.workflow_id == f"doc-{doc.tenant}-{doc.sha256}"
        desc = await client.get_workflow_handle(doc.workflow_id).describe()
        custom = {k: v for k, v in desc.search_attributes.items() if k in SEARCH_ATTRIBUTES}
        assert custom, doc.name
        allowed = {doc.sha256, doc.tenant, doc.source_id} | codes
        for name, values in custom.items():
            assert set(values) <= allowed, (name, values)
        assert await desc.memo() == {}
        summary = await desc.static_summary()
        assert summary and re.fullmatch(
            rf"document {doc.sha256[:12]} tenant={doc.tenant} \d+ bytes", summary
        ), summary
        everything = json.dumps([custom, summary, desc.id], default=str).encode()
        assert not sealed_run.leaks(everything) and Path(doc.name).stem.encode() not in everything


async def test_phi_rotation_documents_before_and_after_all_decode(sealed_run: Run) -> None:
    """With the keyring from disk, results from both sides of the rotation decode."""
    ring = keys.require_dir_keyring(sealed_run.keys_dir)
    client = await Client.connect(sealed_run.address, data_converter=data_converter(ring))
    for doc in sealed_run.docs:
        handle = client.get_workflow_handle_for(DocumentWorkflow.run, doc.workflow_id)
        result = await handle.result()
        assert result.state is DocState.PUBLISHED and result.text_key
        history = await client.get_workflow_handle(doc.workflow_id).fetch_history()
        replay = await _replayer(ring).replay_workflow(history)
        assert replay.replay_failure is None


async def test_phi_saved_plain_histories_replay_through_the_codec(sealed_run: Run) -> None:
    """Histories recorded before encryption (plain JSON payloads) still replay."""
    ring = keys.require_dir_keyring(sealed_run.keys_dir)
    for path in sorted(SAVED_HISTORIES.glob("*.json")):
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        result = await _replayer(ring).replay_workflow(history)
        assert result.replay_failure is None, path.name


@pytest.fixture(scope="module")
def codec_url(sealed_run: Run) -> Iterator[str]:
    """The codec server on a free loopback port, in a thread of this process."""
    ring = keys.require_dir_keyring(sealed_run.keys_dir)
    app = create_app(ring, TOKEN, ["http://localhost:8233"])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def _show(run: Run, wid: str, *codec: str) -> subprocess.CompletedProcess[bytes]:
    """``temporal workflow show --output json`` for one workflow, optionally via a codec."""
    argv = [str(temporal_binary()), "workflow", "show", "--workflow-id", wid]
    argv += ["--address", run.address, "--output", "json", *codec]
    return subprocess.run(argv, capture_output=True, timeout=60)


def test_phi_temporal_cli_decodes_through_the_codec_server(sealed_run: Run, codec_url: str) -> None:
    """With the token the CLI shows plain payloads (as the UI would); without it, none."""
    doc = sealed_run.docs[-1]
    auth = f"Bearer {TOKEN}"
    shown = _show(sealed_run, doc.workflow_id, "--codec-endpoint", codec_url, "--codec-auth", auth)
    assert shown.returncode == 0, shown.stderr[-500:]
    encodings = {
        base64.b64decode(p["metadata"]["encoding"])
        for path, p in _payloads(json.loads(shown.stdout))
        if "searchAttributes" not in path
    }
    assert b"json/plain" in encodings and ENCODING not in encodings
    refused = _show(sealed_run, doc.workflow_id, "--codec-endpoint", codec_url)
    assert refused.returncode != 0 or b"json/plain" not in refused.stdout


def test_phi_shred_leaves_tenant_unreadable_and_others_readable(sealed_run: Run) -> None:
    """After shredding tenant A, its objects raise TENANT_SHREDDED; tenant B's still open."""
    ring = keys.require_dir_keyring(sealed_run.keys_dir)
    store = SealedStore(LocalStore(sealed_run.home / "objects"), ring)
    shredded, kept = sealed_run.docs[0].tenant, sealed_run.docs[1].tenant
    keys.shred(sealed_run.keys_dir, shredded)
    gone = list(store.list(f"records/{shredded}/"))
    assert gone
    for key in gone:
        with pytest.raises(TenantShredded):
            store.get(key)
    kept_keys = list(store.list(f"records/{kept}/"))
    assert kept_keys and all(store.get(k) for k in kept_keys)


def _replayer(ring: Keyring) -> Replayer:
    # Every workflow the I/O worker registers: the saved histories hold each of them.
    return Replayer(workflows=WORKFLOWS, data_converter=data_converter(ring))
