"""Evidence bundles carry the signed receipts of a document's releases, verifiable offline.

Two real documents are published for the module (the default Tesseract
engine); then the signing key is rotated, as a deployment would, and the first
document is released once to an outbox recipient, so its receipt is signed by
a newer key than its record. The bundle's own ``verify_bundle.py`` runs in a
subprocess on the unzipped bundle, with nothing from Custody importable.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody import ids
from custody.egress_store import SignedReceipt, add_recipient
from custody.models import SignedRecord
from custody.settings import Settings
from custody.signing import rotate
from custody.stores.local import LocalStore
from starter.client.release import release, wait_release
from starter.client.submit import submit, wait
from starter.evidence.bundle import export_bundle
from tests.helpers import make_settings, recipient, running_pipeline


@dataclass
class Released:
    settings: Settings
    tenant: str
    sha256: str
    other: str
    release_id: str

    @property
    def store(self) -> LocalStore:
        return LocalStore(self.settings.objects_dir)


@pytest.fixture(scope="module")
async def released(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
) -> Released:
    home = tmp_path_factory.mktemp("bundle-receipts")
    settings = make_settings(home, temporal_address, egress_delivery_attempts=2)
    tenant = "receipts-" + os.urandom(4).hex()
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        subs = [
            await submit(custody, corpus / "ocr_gt" / name, tenant=tenant)
            for name in ("tess_phototest.tif", "funsd_86263525.png")
        ]
        for sub in subs:
            await wait(custody, sub.sha256, tenant=tenant)
    rotate(settings.signing_path, development=True)  # the release worker signs with the new key
    async with running_pipeline(
        temporal_client, settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        add_recipient(custody.store, recipient(tenant, "clinic-b", home / "outbox"))
        started = await release(custody, [subs[0].sha256], to="clinic-b", tenant=tenant, actor="op")
        done = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert done.state is eg.ReleaseState.DELIVERED, done
    return Released(settings, tenant, subs[0].sha256, subs[1].sha256, done.release_id)


def _unzipped(r: Released, sha256: str, tmp_path: Path) -> Path:
    bundle = export_bundle(r.store, sha256, r.tenant, tmp_path / "bundle.zip", actor="auditor")
    folder = tmp_path / "bundle"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(folder)
    return folder


def _verify(folder: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The bundle's own verifier, isolated (-I): nothing of Custody on its path."""
    run = [sys.executable, "-I", str(folder / "verify_bundle.py"), str(folder)]
    return subprocess.run(run, capture_output=True, text=True, cwd=cwd, timeout=60)


def test_bundle_receipts_verify_offline_and_a_flipped_byte_fails_by_name(
    released: Released, tmp_path: Path
) -> None:
    """The receipt travels with the key that signed it; a changed byte fails its signature."""
    r = released
    folder = _unzipped(r, r.sha256, tmp_path)
    receipt_file = folder / "receipts" / f"{r.release_id}.json"
    stored = r.store.get(eg.receipt_key(r.tenant, r.release_id))
    assert receipt_file.read_bytes() == stored
    record = SignedRecord.model_validate_json(r.store.get(ids.record_key(r.sha256, r.tenant)))
    receipt_kid = SignedReceipt.model_validate_json(stored).signature.kid
    assert receipt_kid != record.signature.kid  # signed after the rotation
    assert {p.stem for p in (folder / "keys").iterdir()} == {receipt_kid, record.signature.kid}
    good = _verify(folder, tmp_path)
    assert good.returncode == 0 and good.stdout.strip().endswith("PASS"), good.stdout
    assert f"PASS  receipt.signature:{r.release_id}" in good.stdout
    assert f"PASS  receipt.sources:{r.release_id}" in good.stdout
    body = bytearray(stored)
    at = body.index(b'"packet_sha256":"') + len(b'"packet_sha256":"')
    body[at] ^= 0x01  # one hex digit of the packet hash: still valid JSON
    receipt_file.write_bytes(bytes(body))
    json.loads(receipt_file.read_bytes())
    bad = _verify(folder, tmp_path)
    assert bad.returncode == 1 and bad.stdout.strip().endswith("FAIL"), bad.stdout
    assert f"FAIL  receipt.signature:{r.release_id}" in bad.stdout
    assert f"PASS  receipt.sources:{r.release_id}" in bad.stdout


def test_bundle_receipts_of_other_documents_stay_out(released: Released, tmp_path: Path) -> None:
    """A document that was never released gets no receipt, and its bundle still verifies."""
    r = released
    folder = _unzipped(r, r.other, tmp_path)
    assert not (folder / "receipts").exists()
    good = _verify(folder, tmp_path)
    assert good.returncode == 0 and "receipt." not in good.stdout, good.stdout
