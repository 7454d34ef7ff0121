"""Evidence bundles carry the signed receipts of a document's releases, verifiable offline.

Two real documents are published once for the session (the session's engine);
then, in a copy, the signing key is rotated, as a deployment would, and the
first document is released once to an outbox recipient, so its receipt is
signed by a newer key than its record (``tests/published.py``); here both are
then released together (a release of several, whose egress event commits to
each by a salted hash). This module and ``test_verify_bundle_bytes`` each start
from a copy of that home. The bundle's own ``verify_bundle.py`` runs in a
subprocess on the unzipped bundle, with nothing from Custody importable.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
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
from custody.canonical import canonical_json
from custody.ledger.signing import local_public_keys, rotate
from custody.models import SignedRecord
from custody.settings import Settings
from custody.state.egress import SignedReceipt, add_recipient
from starter.client.release import release, wait_release
from starter.evidence.bundle import export_bundle
from starter.evidence.trust import fingerprint
from tests.helpers import recipient, running_pipeline
from tests.published import InHome, copy_published
from tests.published import Released as ReleasedOnce


@dataclass
class Released(InHome):
    settings: Settings
    tenant: str
    sha256: str
    other: str
    release_id: str
    both_id: str


@pytest.fixture(scope="module")
async def released(
    released_once: ReleasedOnce,
    tmp_path_factory: pytest.TempPathFactory,
    temporal_client: Client,
    ocr_engine: OcrEngine,
    request: pytest.FixtureRequest,
) -> Released:
    """The session's two published documents after a rotation and one release, copied;
    then both released together, to a recipient of this copy's own (its own outbox)."""
    home = tmp_path_factory.mktemp("bundle-receipts")
    p = copy_published(released_once.published, home)
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        # Its own recipient name per module: the release id derives from tenant, recipient
        # and documents, and the modules reusing this fixture may run at once (xdist).
        to = f"clinic-{hashlib.sha256(request.module.__name__.encode()).hexdigest()[:8]}"
        add_recipient(custody.store, recipient(p.tenant, to, home / "outbox-r"))
        docs = [p.sha256, p.other]
        started = await release(custody, docs, to=to, tenant=p.tenant, actor="op")
        both = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert both.state is eg.ReleaseState.DELIVERED, both
    return Released(
        p.settings, p.tenant, p.sha256, p.other, released_once.release_id, both.release_id
    )


def _unzipped(r: Released, sha256: str, tmp_path: Path) -> Path:
    bundle = export_bundle(r.store, sha256, r.tenant, tmp_path / "bundle.zip", actor="auditor")
    folder = tmp_path / "bundle"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(folder)
    return folder


def _pins(r: Released) -> list[str]:
    """``--trust FPR`` for each signing key the operator holds (both, after the rotation)."""
    held = local_public_keys(r.settings.signing_path, None, production=False)
    return [arg for key in held for arg in ("--trust", fingerprint(key))]


def _verify(
    folder: Path, cwd: Path, pins: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The bundle's own verifier, isolated (-I): nothing of Custody on its path."""
    run = [sys.executable, "-I", str(folder / "verify_bundle.py"), *(pins or []), str(folder)]
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
    good = _verify(folder, tmp_path, _pins(r))
    assert good.returncode == 0 and good.stdout.strip().endswith("PASS"), good.stdout
    assert f"PASS  receipt.signature:{r.release_id}" in good.stdout
    assert f"PASS  receipt.sources:{r.release_id}" in good.stdout
    body = bytearray(stored)
    at = body.index(b'"packet_sha256":"') + len(b'"packet_sha256":"')
    body[at] ^= 0x01  # one hex digit of the packet hash: still valid JSON
    receipt_file.write_bytes(bytes(body))
    json.loads(receipt_file.read_bytes())
    bad = _verify(folder, tmp_path, _pins(r))
    assert bad.returncode == 1 and bad.stdout.strip().endswith("FAIL"), bad.stdout
    assert f"FAIL  receipt.signature:{r.release_id}" in bad.stdout
    assert f"PASS  receipt.sources:{r.release_id}" in bad.stdout


def test_bundle_receipts_of_other_documents_stay_out(released: Released, tmp_path: Path) -> None:
    """The other document left only with the first: its bundle has no receipt (that one names
    both, with sizes), says so, and carries the release's events, proven."""
    r = released
    folder = _unzipped(r, r.other, tmp_path)
    assert not (folder / "receipts").exists()
    good = _verify(folder, tmp_path, _pins(r))
    assert good.returncode == 0 and "receipt." not in good.stdout, good.stdout
    assert f"left out: receipt {r.both_id}: names other documents" in good.stdout
    kinds = {json.loads(p.read_bytes())["kind"] for p in (folder / "ledger").glob("0*.json")}
    assert {"egress", "egress.receipt"} <= kinds


def test_bundle_release_of_several_commits_by_salted_hashes(
    released: Released, tmp_path: Path
) -> None:
    """The release of both is in each one's bundle with that document's salt alone: the
    auditor sees its document in the event and nothing of the other."""
    r = released
    folder = _unzipped(r, r.sha256, tmp_path)
    proofs = json.loads((folder / "ledger" / "proofs.json").read_bytes())
    events = {int(p.stem): json.loads(p.read_bytes()) for p in (folder / "ledger").glob("0*.json")}
    (seq,) = [s for s, e in events.items() if e["detail"].get("release_id") == r.both_id
              and e["kind"] == "egress"]  # fmt: skip
    salt = proofs["salts"][str(seq)]
    committed = events[seq]["detail"]["documents_salted"]
    assert hashlib.sha256(f"{salt}{r.sha256}".encode()).hexdigest() in committed
    assert len(committed) == 2 and "documents" not in events[seq]["detail"]
    good = _verify(folder, tmp_path, _pins(r))
    assert good.returncode == 0 and "PASS  ledger.events" in good.stdout, good.stdout
    assert f"PASS  receipt.logged:{r.release_id}" in good.stdout


def test_bundle_carries_only_its_own_events_with_inclusion_proofs(
    released: Released, tmp_path: Path
) -> None:
    """No other document's hash or ids travel; each event is proven in the signed log instead."""
    r = released
    folder = _unzipped(r, r.sha256, tmp_path)
    events = [json.loads(p.read_bytes()) for p in sorted((folder / "ledger").glob("0*.json"))]
    assert events and {e["sha256"] for e in events} == {r.sha256, None}  # None: release events
    assert {e["kind"] for e in events if e["sha256"] is None} <= {"egress", "egress.receipt"}
    foreign = [r.other, ids.workflow_id(r.other, r.tenant)]
    for path in (p for p in folder.rglob("*") if p.is_file() and p.name != "source.bin"):
        assert not any(f.encode() in path.read_bytes() for f in foreign), path.name
    good = _verify(folder, tmp_path, _pins(r))
    assert "PASS  ledger.inclusion" in good.stdout and good.returncode == 0, good.stdout
    # An event rewritten with a fresh self-hash still holds its own, but not its place in the tree.
    path = sorted((folder / "ledger").glob("0*.json"))[0]
    event = json.loads(path.read_bytes())
    event["actor"] = "someone-else"
    body = {k: v for k, v in event.items() if k != "hash"}
    event["hash"] = hashlib.sha256(canonical_json(body)).hexdigest()
    path.write_bytes(canonical_json(event))
    forged = _verify(folder, tmp_path, _pins(r))
    assert "PASS  ledger.events" in forged.stdout and "FAIL  ledger.inclusion" in forged.stdout


def test_bundle_verifies_only_against_a_pinned_key(released: Released, tmp_path: Path) -> None:
    """The keys shipped in the bundle alone prove nothing: no --trust, or a rogue one, FAILs."""
    folder = _unzipped(released, released.sha256, tmp_path)
    bare = _verify(folder, tmp_path)
    assert bare.returncode == 1 and "FAIL  trust.pinned" in bare.stdout, bare.stdout
    assert "FAIL  record.signature" in bare.stdout and "FAIL  ledger.checkpoint" in bare.stdout
    rogue = rotate(tmp_path / "rogue")
    wrong = _verify(folder, tmp_path, ["--trust", fingerprint(rogue.public)])
    assert wrong.returncode == 1 and "FAIL  record.signature" in wrong.stdout
