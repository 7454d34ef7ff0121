"""The SDK as a user meets it: the README's example as written, and a deployment it must find.

The example is cut out of README.md and run by a fresh interpreter, with only
``CUSTODY_*`` variables pointing it at a sealed deployment (a keyring, the
encrypting converter and the sealed store, the workers in this process), so
the README cannot drift from what runs. From a folder that is no deployment's
home, the SDK and the CLI must refuse before anything is written or sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from pathlib import Path
from uuid import uuid4

import pytest
from PIL import Image
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

import starter
from custody import ids
from custody.errors import ConfigurationError
from custody.keys import keyring as keys
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from custody.temporal import connect_temporal
from starter.cli.output import Exit
from tests.helpers import Rig, cli, make_settings, running_pipeline

REPO = Path(__file__).resolve().parents[3]


def readme_example() -> str:
    """The Python block of the README's "Python SDK" section, exactly as printed there."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Python SDK") :]
    start = section.index("```python\n") + len("```python\n")
    return section[start : section.index("```", start)]


def _referral(path: Path, corpus: Path) -> None:
    """A one-page scan saved as the example's ``referral.pdf``, its bytes this test's own."""
    with Image.open(corpus / "ocr_gt" / "tess_phototest.tif") as scan:
        scan.convert("L").save(path, format="PDF", title=uuid4().hex, resolution=200.0)


async def test_sdk_readme_example_runs_as_written(rig: Rig, tmp_path: Path) -> None:
    """The README's example, run verbatim against a sealed deployment, prints a published
    document's state, code and pages; what it stored is ciphertext."""
    home = tmp_path / "home"
    ring = keys.init_keyring(home / "keys", development=True)
    settings = make_settings(home, rig.address, allow_plaintext=False)
    sealed = SealedStore(LocalStore(settings.objects_dir), ring)
    client = await connect_temporal(settings)  # the workers decode what the example seals
    work = tmp_path / "elsewhere"  # the example runs from another folder, by CUSTODY_HOME
    work.mkdir()
    _referral(work / "referral.pdf", rig.corpus)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODY_")}
    env |= {
        "CUSTODY_HOME": str(home),
        "CUSTODY_TEMPORAL_ADDRESS": rig.address,
        "CUSTODY_IO_TASK_QUEUE": settings.io_task_queue,
        "CUSTODY_OCR_TASK_QUEUE": settings.ocr_task_queue,
        "PYTHONPATH": str(REPO),
    }
    async with running_pipeline(client, settings, rig.engine, store=sealed):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", readme_example(), cwd=work, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), timeout=300)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert out.decode().split() == ["published", "None", "1"]
    stored = [k for k in sealed.list("") if "/clinic-a/" in k]  # source, text, pages, record
    assert {k.partition("/")[0] for k in stored} >= {"sources", "results", "records"}
    assert all((settings.objects_dir / k).read_bytes()[:5] == b"CSTDY" for k in stored)
    assert list(work.iterdir()) == [work / "referral.pdf"]  # no store grew beside it


async def test_sdk_from_a_folder_without_keys_refuses_and_touches_nothing(
    temporal_client: Client,
    temporal_address: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From an empty folder, ``starter.connect()`` and ``custody submit`` raise or exit 9
    (CONFIGURATION): no file appears there and no workflow starts. With CUSTODY_HOME
    set to a deployment's home, as the message says, it connects."""
    empty = tmp_path / "empty"
    empty.mkdir()
    scan = tmp_path / "scan.png"
    Image.new("L", (64, 64), 200).save(scan, format="PNG")
    scan.write_bytes(scan.read_bytes() + uuid4().bytes)  # bytes no other test submits
    monkeypatch.chdir(empty)
    monkeypatch.delenv("CUSTODY_HOME", raising=False)
    monkeypatch.delenv("CUSTODY_ALLOW_PLAINTEXT", raising=False)
    monkeypatch.setenv("CUSTODY_TEMPORAL_ADDRESS", temporal_address)
    with pytest.raises(ConfigurationError) as refused:
        await starter.connect()
    assert "CUSTODY_HOME" in refused.value.detail and str(empty) in refused.value.detail
    code, answer = await asyncio.to_thread(cli, Settings(), "submit", str(scan))
    assert code == Exit.CONFIG and answer["error"] == "CONFIGURATION"
    assert list(empty.iterdir()) == []
    sha = hashlib.sha256(scan.read_bytes()).hexdigest()
    with pytest.raises(RPCError) as missing:
        await temporal_client.get_workflow_handle(ids.workflow_id(sha)).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND
    home = tmp_path / "deployment"
    keys.init_keyring(home / "keys", development=True)
    monkeypatch.setenv("CUSTODY_HOME", str(home))
    custody = await starter.connect()
    assert custody.settings.home == home and isinstance(custody.store, SealedStore)
