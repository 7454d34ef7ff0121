"""Real documents through a sealed pipeline: no text where it could be read.

One dev server of this module's own (SQLite file, so its raw bytes can be
searched), a client and workers with the encrypting converter, and the sealed
store. Three small corpus documents (tess_phototest.tif and two receipts) keep
the run short; the key is rotated between the second and the third. Each sink
is then searched for the ground-truth lines and the recognised lines (>= 12
characters): the SQLite file, the history from ``fetch_history()`` and from the
``temporal`` CLI, the object store's raw files and the staging folder.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import uvicorn
from temporalio.client import Client, WorkflowHistory
from temporalio.common import SearchAttributeKey
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from activities.ocr_engine import OcrEngine
from custody import keys
from custody.codec import ENCODING, KEY_ID
from custody.converter import data_converter
from custody.keys import Keyring, TenantShredded
from custody.models import DocState
from custody.queues import SEARCH_ATTRIBUTES
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.api import CustodyClient, submit, wait
from starter.codec_server import create_app
from starter.stack import temporal_binary
from tests.helpers import make_settings, running_pipeline
from workflows.document import DocumentWorkflow

pytestmark = pytest.mark.slow

BEFORE_ROTATION = ("tess_phototest.tif", "sroie_041.jpg")
AFTER_ROTATION = ("sroie_167.jpg",)
TOKEN = "phi-test-token"
SAVED_HISTORIES = Path(__file__).parents[1] / "workflows" / "histories"


@dataclass
class Doc:
    name: str
    tenant: str
    workflow_id: str
    text: str
    needles: list[bytes]


@dataclass
class Run:
    db: Path
    address: str
    home: Path
    keys_dir: Path
    docs: list[Doc]
    first_kid: str
    rotated_kid: str


@pytest.fixture(scope="module")
async def sealed_run(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path, ocr_engine: OcrEngine
) -> AsyncIterator[Run]:
    base = tmp_path_factory.mktemp("phi")
    ring = keys.init_keyring(base / "keys", development=True)
    db = base / "temporal.db"
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(temporal_binary()),
        dev_server_database_filename=str(db),
        search_attributes=[SearchAttributeKey.for_keyword(n) for n in SEARCH_ATTRIBUTES],
        data_converter=data_converter(ring),
        dev_server_log_level="error",
    )
    address = str(env.client.service_client.config.target_host)
    tenants = (f"a{uuid4().hex[:10]}", f"b{uuid4().hex[:10]}", f"b{uuid4().hex[:10]}")
    settings = make_settings(base / "home", address)
    try:
        docs = await _process(
            env.client, ring, settings, BEFORE_ROTATION, tenants, corpus, ocr_engine
        )
        rotated_kid = keys.rotate(base / "keys")
        fresh = keys.require_dir_keyring(base / "keys")  # what a restarted worker loads
        client = await Client.connect(address, data_converter=data_converter(fresh))
        docs += await _process(
            client, fresh, settings, AFTER_ROTATION, tenants[2:], corpus, ocr_engine
        )
        first_kid = min(fresh.payload)
        yield Run(db, address, settings.home, base / "keys", docs, first_kid, rotated_kid)
    finally:
        await env.shutdown()


async def _process(
    client: Client,
    ring: Keyring,
    settings: Settings,
    names: tuple[str, ...],
    tenants: tuple[str, ...],
    corpus: Path,
    engine: OcrEngine,
) -> list[Doc]:
    store = SealedStore(LocalStore(settings.objects_dir), ring)
    docs: list[Doc] = []
    async with running_pipeline(client, settings, engine, store=store) as custody:
        for name, tenant in zip(names, tenants, strict=False):
            docs.append(await _one(custody, corpus / "ocr_gt" / name, tenant))
    return docs


async def _one(custody: CustodyClient, path: Path, tenant: str) -> Doc:
    sub = await submit(custody, path, tenant=tenant)
    res = await wait(custody, sub.sha256, tenant=tenant)
    assert res.state is DocState.PUBLISHED and res.text_key
    text = custody.store.get(res.text_key).decode()
    truth = path.with_suffix(".txt").read_text()
    lines = {ln.strip() for ln in (truth + "\n" + text).splitlines() if len(ln.strip()) >= 12}
    return Doc(path.name, tenant, sub.workflow_id, text, sorted(ln.encode() for ln in lines))


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
        assert not any(n in data for d in run.docs for n in d.needles)
        if "searchAttributes" in path:
            continue  # hashes, states, codes, tenant ids: indexed, so never encrypted
        count += 1
        assert base64.b64decode(payload["metadata"]["encoding"]) == ENCODING, path
        kids.add(base64.b64decode(payload["metadata"][KEY_ID]).decode())
    assert count > 0
    assert not any(n in blob for d in run.docs for n in d.needles)
    return kids


def test_phi_needles_are_real_text(sealed_run: Run) -> None:
    """The searched lines exist: each document has recognised lines of 12+ characters."""
    for doc in sealed_run.docs:
        recognised = [n for n in doc.needles if n.decode() in doc.text]
        assert recognised, doc.name


async def test_phi_fetched_histories_are_encrypted(sealed_run: Run) -> None:
    """``fetch_history()`` JSON carries ciphertext only, under the key current at the time."""
    client = await Client.connect(sealed_run.address)  # no codec: what a reader of the DB sees
    for doc in sealed_run.docs:
        history = await client.get_workflow_handle(doc.workflow_id).fetch_history()
        kids = _assert_sealed_history(history.to_json_dict(), sealed_run)
        expected = sealed_run.rotated_kid if doc.name in AFTER_ROTATION else sealed_run.first_kid
        assert kids == {expected}


def test_phi_temporal_cli_history_is_encrypted(sealed_run: Run) -> None:
    """``temporal workflow show --output json`` shows no plaintext either."""
    doc = sealed_run.docs[0]
    out = subprocess.run(
        [
            str(temporal_binary()),
            "workflow",
            "show",
            "--workflow-id",
            doc.workflow_id,
            "--address",
            sealed_run.address,
            "--output",
            "json",
        ],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    assert b"workflowExecutionStartedEventAttributes" in out
    _assert_sealed_history(json.loads(out), sealed_run)


def test_phi_sqlite_file_holds_no_plaintext(sealed_run: Run) -> None:
    """The dev server's SQLite file (and its WAL) has workflow IDs but no document text."""
    files = [p for p in sealed_run.db.parent.glob(sealed_run.db.name + "*") if p.is_file()]
    raw = b"".join(p.read_bytes() for p in files)
    assert sealed_run.docs[0].workflow_id.encode() in raw  # we are reading the right file
    assert not any(n in raw for d in sealed_run.docs for n in d.needles)


def test_phi_object_store_and_staging_hold_no_plaintext(sealed_run: Run) -> None:
    """Every raw object file is needle-free, and staging kept no file at all."""
    objects = [p for p in (sealed_run.home / "objects").rglob("*") if p.is_file()]
    assert len(objects) >= 3 * len(sealed_run.docs)
    for path in objects:
        raw = path.read_bytes()
        assert not any(n in raw for d in sealed_run.docs for n in d.needles), path.name
    staged = [p for p in (sealed_run.home / "staging").rglob("*") if p.is_file()]
    assert staged == []


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
    return Replayer(workflows=[DocumentWorkflow], data_converter=data_converter(ring))
