"""The evidence packet's ledger hash is that of the bytes the store holds, checked at write time.

``custody.validate`` runs as the worker runs it (Temporal's ``ActivityEnvironment``,
the real bounded inspector, a real local store and ledger) on one corpus scan.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.scratch import StagingArea
from activities.validation import ValidationActivities
from custody import ids
from custody.canonical import canonical_json
from custody.ledger.events import Ledger
from custody.models import EvidencePacket, ValidateInput
from custody.settings import Limits
from custody.stores.local import LocalStore

CORPUS = Path(
    os.environ.get("CUSTODY_CORPUS")
    or Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
)
SCAN = CORPUS / "ocr_gt" / "funsd_82092117.png"
TENANT = "clinic-a"


class AlteringStore(LocalStore):
    """A stand-in to inject a fault: a store that silently adds a space to the packet it keeps."""

    def create(self, key: str, data: bytes) -> bool:
        if key.endswith("/packet.json"):
            data = data.replace(b",", b", ", 1)
        return super().create(key, data)


def _validate(store: LocalStore, tmp_path: Path, run_id: str = "run-1") -> str:
    """Stage the scan as its source, run ``custody.validate``; the document's SHA-256."""
    data = SCAN.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    store.create(ids.source_key(sha, TENANT), data)
    acts = ValidationActivities(store, StagingArea(tmp_path / "staging"), Limits())
    inp = ValidateInput(
        sha256=sha, tenant=TENANT, source_key=ids.source_key(sha, TENANT), size_bytes=len(data)
    )
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, workflow_id=f"doc-{sha[:8]}", workflow_run_id=run_id)
    env.run(acts.validate, inp)
    return sha


def _packet_hashes(store: LocalStore, sha: str) -> list[object]:
    events = Ledger(store, TENANT).for_document(sha)
    return [e.detail.get("packet_sha256") for e in events if e.kind == "validated"]


def test_validation_packet_bytes_ledger_pins_the_stored_packet(tmp_path: Path) -> None:
    """With an honest store, the validated event names the SHA-256 of the packet as stored."""
    store = LocalStore(tmp_path / "objects")
    sha = _validate(store, tmp_path)
    stored = store.get(ids.packet_key(sha, TENANT))
    assert _packet_hashes(store, sha) == [hashlib.sha256(stored).hexdigest()]


def test_validation_packet_bytes_store_that_alters_them_is_seal_invalid(tmp_path: Path) -> None:
    """A store that changes the packet on write fails validation with SEAL_INVALID, unledgered."""
    store = AlteringStore(tmp_path / "objects")
    with pytest.raises(ApplicationError) as failed:
        _validate(store, tmp_path)
    assert failed.value.type == "SEAL_INVALID" and failed.value.non_retryable
    assert "altered on write" in str(failed.value)
    sha = hashlib.sha256(SCAN.read_bytes()).hexdigest()
    assert _packet_hashes(store, sha) == []  # nothing pins the altered bytes


def test_validation_packet_bytes_earlier_runs_packet_is_pinned(tmp_path: Path) -> None:
    """A second run finds the first run's packet and pins those bytes, not the body it meant."""
    store = LocalStore(tmp_path / "objects")
    sha = _validate(store, tmp_path, run_id="run-1")
    first = store.get(ids.packet_key(sha, TENANT))
    _validate(store, tmp_path, run_id="run-2")
    assert store.get(ids.packet_key(sha, TENANT)) == first
    assert _packet_hashes(store, sha) == [hashlib.sha256(first).hexdigest()] * 2


def test_validation_packet_bytes_another_documents_packet_is_seal_invalid(
    tmp_path: Path,
) -> None:
    """A packet already at the key that names another document is SEAL_INVALID, not pinned."""
    store = LocalStore(tmp_path / "objects")
    sha = hashlib.sha256(SCAN.read_bytes()).hexdigest()
    stranger = EvidencePacket(
        sha256="00" * 32,
        size_bytes=1,
        media_type="image/png",
        pages=1,
        source_id=None,
        tenant=TENANT,
        captured_at=None,
        signer={},
        policy_version="v0",
        workflow_id="other",
        run_id="other",
    )
    store.create(ids.packet_key(sha, TENANT), canonical_json(stranger))
    with pytest.raises(ApplicationError) as failed:
        _validate(store, tmp_path)
    assert failed.value.type == "SEAL_INVALID" and "not this document's" in str(failed.value)
    assert _packet_hashes(store, sha) == []
