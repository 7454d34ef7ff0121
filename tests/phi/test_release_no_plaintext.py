"""Releases through a sealed pipeline: the text leaves in the packet, and nowhere else.

The sibling of ``test_sealed_pipeline`` (whose server, worker and needle helpers
it imports): a dev server of this module's own, the I/O and OCR workers as
their own processes (JSON logs at DEBUG, Prometheus endpoints on), the
encrypting converter and the sealed store. Two real documents are published
and then released together to an outbox recipient through the real workers.

The released files hold the documents' text: that is what a release is for.
The release workflow's history (every payload decoded with the keyring),
its search attributes and summary, the SQLite file, the sealed objects, the
logs and both /metrics endpoints must hold none of it: only hashes, codes, ids.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from custody import egress as eg
from custody.converter import data_converter
from custody.errors import Code
from custody.keys import keyring as keys
from custody.keys.codec import EncryptionCodec
from custody.keys.keyring import Keyring
from custody.queues import SEARCH_ATTRIBUTES
from custody.settings import Settings
from custody.state.egress import add_recipient
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.client.connect import CustodyClient
from starter.client.release import release, wait_release
from tests.helpers import make_settings, recipient
from tests.phi.test_sealed_pipeline import (
    SUBSET,
    Run,
    _assert_sealed_history,
    _connect,
    _free_port,
    _payloads,
    _process,
    _show,
    _start_server,
    _stop,
    _workers,
)

DOCUMENTS = SUBSET[:2]  # a TIFF and a receipt: names, an address, amounts
RECIPIENT = "clinic-b"


@dataclass
class Released:
    run: Run
    ring: Keyring
    tenant: str
    result: eg.ReleaseResult
    outbox: Path
    metrics: dict[str, bytes]

    @property
    def workflow_id(self) -> str:
        return self.result.workflow_id


@pytest.fixture(scope="module")
async def released(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> AsyncIterator[Released]:
    base = tmp_path_factory.mktemp("phi-release")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    settings = make_settings(base / "home", address, egress_delivery_attempts=2)
    keys_dir = keys.keys_dir(settings)
    ring = keys.init_keyring(keys_dir, development=True)
    logs = base / "logs"
    logs.mkdir()
    db = base / "temporal.db"
    server = _start_server(db, port, logs / "temporal.log")
    ports = {"io": _free_port(), "ocr": _free_port()}
    tenant = f"r{uuid4().hex[:10]}"
    procs: list[Any] = []
    try:
        client = await _connect(address, ring)
        with pytest.MonkeyPatch.context() as env:  # the workers' /metrics, for this run only
            env.setenv("CUSTODY_IO_METRICS_PORT", str(ports["io"]))
            env.setenv("CUSTODY_OCR_METRICS_PORT", str(ports["ocr"]))
            procs = await _workers(settings, logs, 1)
        paths = [corpus / "ocr_gt" / name for name in DOCUMENTS]
        docs = await _process(client, ring, settings, paths, (tenant,), rotated=False)
        result = await _release(client, ring, settings, tenant, base / "outbox")
        metrics = {name: await _scrape(p) for name, p in ports.items()}
        await _stop(procs)
        kid = max(ring.payload)
        needles = {n for d in docs for n in d.needles}
        run = Run(db, address, settings.home, keys_dir, logs, docs, kid, kid, 0.0, needles)
        yield Released(run, ring, tenant, result, base / "outbox", metrics)
    finally:
        await _stop(procs)
        server.terminate()
        server.wait(30)


async def _release(
    client: Client, ring: Keyring, settings: Settings, tenant: str, outbox: Path
) -> eg.ReleaseResult:
    """Every published document of ``tenant``, in one release to an outbox recipient."""
    store = SealedStore(LocalStore(settings.objects_dir), ring)
    custody = CustodyClient(temporal=client, store=store, settings=settings)
    add_recipient(store, recipient(tenant, RECIPIENT, outbox))
    prefix = f"records/{tenant}/"
    docs = [key[len(prefix) :].removesuffix(".json") for key in store.list(prefix)]
    started = await release(custody, docs, to=RECIPIENT, tenant=tenant, actor="op:phi")
    return await asyncio.wait_for(wait_release(custody, started.release_id), 600)


async def _scrape(port: int) -> bytes:
    url = f"http://127.0.0.1:{port}/metrics"
    body: bytes = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read())
    return body


def _stems(r: Released, raw: bytes) -> list[str]:
    """The documents' file names found in ``raw``."""
    return [d.name for d in r.run.docs if Path(d.name).stem.encode() in raw]


async def _decoded(history_json: dict[str, Any], ring: Keyring) -> list[bytes]:
    """The plain bytes of every encrypted payload in the history, through the keyring."""
    codec = EncryptionCodec(ring)
    sealed = [
        json_format.ParseDict(p, Payload())
        for path, p in _payloads(history_json)
        if "searchAttributes" not in path
    ]
    return [p.data for p in await codec.decode(sealed)]


def test_release_phi_packet_left_with_every_document(released: Released) -> None:
    """Both documents were released to the outbox, and the needles find their text."""
    r = released
    assert r.result.state is eg.ReleaseState.DELIVERED, r.result
    assert sorted(r.result.documents) == sorted(d.sha256 for d in r.run.docs)
    delivered = {p.name for p in (r.outbox / r.result.release_id).iterdir()}
    assert delivered == {f.name for f in r.result.files} | {"manifest.json"}
    assert len(r.result.files) == len(DOCUMENTS)
    assert all(r.run.leaks(d.text.encode()) for d in r.run.docs)  # the needles find real text


async def test_release_phi_history_decoded_holds_no_plaintext(released: Released) -> None:
    """Every payload of the release's history is sealed, and decoded holds ids and hashes only."""
    r = released
    client = await Client.connect(r.run.address)  # no codec: the raw history
    history = (await client.get_workflow_handle(r.workflow_id).fetch_history()).to_json_dict()
    assert _assert_sealed_history(history, r.run) == {r.run.first_kid}
    plain = await _decoded(history, r.ring)
    assert len(plain) >= 6  # input, each activity's argument and result, the workflow's result
    for data in plain:
        assert not r.run.leaks(data), data[:80]
        assert not _stems(r, data)
    blob = b"".join(plain)
    assert r.result.release_id.encode() in blob  # decoding worked: the references are there
    assert all(d.sha256.encode() in blob for d in r.run.docs)
    shown = _show(r.run, r.workflow_id)
    assert shown.returncode == 0, shown.stderr[-500:]
    _assert_sealed_history(json.loads(shown.stdout), r.run)


async def test_release_phi_search_attributes_and_summary_carry_no_text(
    released: Released,
) -> None:
    """Each search attribute is a state, code, tenant or recipient; the summary a hash and count."""
    r = released
    client = await Client.connect(r.run.address, data_converter=data_converter(r.ring))
    desc = await client.get_workflow_handle(r.workflow_id).describe()
    custom = {k: v for k, v in desc.search_attributes.items() if k in SEARCH_ATTRIBUTES}
    assert custom
    allowed = {c.value for c in Code} | {s.value for s in eg.ReleaseState}
    allowed |= {r.tenant, RECIPIENT, ""}
    for name, values in custom.items():
        assert set(values) <= allowed, (name, values)
    assert await desc.memo() == {}
    summary = await desc.static_summary()
    rid = r.result.release_id
    assert summary and re.fullmatch(
        rf"release {rid[:12]} of {len(DOCUMENTS)} document\(s\)", summary
    )
    everything = json.dumps([custom, summary, desc.id], default=str).encode()
    assert not r.run.leaks(everything) and not _stems(r, everything)


def test_release_phi_sqlite_and_objects_hold_no_plaintext(released: Released) -> None:
    """The server's SQLite file and every sealed object, rendered release files included."""
    r = released
    files = [p for p in r.run.db.parent.glob(r.run.db.name + "*") if p.is_file()]
    raw = b"".join(p.read_bytes() for p in files)
    assert r.workflow_id.encode() in raw  # the right file
    assert not r.run.leaks(raw)
    rendered = r.run.home / "objects" / "egress" / r.tenant / "releases" / r.result.release_id
    assert len([p for p in rendered.rglob("*") if p.is_file()]) >= len(DOCUMENTS)
    for path in (r.run.home / "objects").rglob("*"):
        if path.is_file():
            assert not r.run.leaks(path.read_bytes()), path.name


def test_release_phi_logs_hold_no_plaintext(released: Released) -> None:
    """The server's and both workers' DEBUG logs name the release but hold no text or file name."""
    r = released
    logs = {p.name: p.read_bytes() for p in r.run.logs.iterdir()}
    assert set(logs) == {"temporal.log", "io-1.log", "ocr-1.log"}
    assert r.workflow_id.encode() in logs["io-1.log"]  # the release's activities logged here
    raw = b"".join(logs.values())
    assert not r.run.leaks(raw)
    assert not _stems(r, raw)


def test_release_phi_metrics_hold_no_plaintext(released: Released) -> None:
    """Both workers' /metrics count the release's activities and hold no text or file name."""
    r = released
    assert b"custody.release.deliver" in r.metrics["io"]  # scraped after the release ran
    assert b"custody.ocr" in r.metrics["ocr"]
    for body in r.metrics.values():
        assert not r.run.leaks(body)
        assert not _stems(r, body)
