"""The witness as a second S3 bucket with Object Lock, spoken to over HTTP (moto server).

A worker can add checkpoints to the witness bucket but cannot take one back: a
versioned delete is refused under COMPLIANCE retention, and a plain delete only
hides the note behind a delete marker, which ``audit verify`` reads through. On
a versioned ledger bucket the audit names what was overwritten or hidden.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from botocore.exceptions import ClientError
from pydantic import SecretStr

from custody.ledger.checkpoints import Notary, open_witness, witness_key
from custody.ledger.events import Ledger
from custody.ledger.signing import rotate
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.s3 import S3Store, client_from_settings
from starter.evidence.verify.audit import verify_log
from tests.custody.ledger.forge import forge, history


@pytest.fixture
def witness(moto_endpoint: str, tmp_path: Path) -> S3Store:
    settings = Settings(
        home=tmp_path,
        s3_endpoint_url=moto_endpoint,
        s3_access_key_id=SecretStr("testing"),
        s3_secret_access_key=SecretStr("testing"),
        witness_s3_bucket=f"witness-{uuid.uuid4().hex[:12]}",
        witness_lock_days=1,
    )
    found = open_witness(settings)
    assert isinstance(found, S3Store)
    found.ensure_bucket(object_lock=True)  # the operator's bucket, made once
    return found


def test_witness_s3_hidden_note_still_exposes_truncation(witness: S3Store, tmp_path: Path) -> None:
    """Notes are locked; a delete marker hides the newest, yet verify reads every version."""
    signer = rotate(tmp_path / "signing")
    store = LocalStore(tmp_path / "objects")
    ledger = Ledger(store, "t", Notary(signer, witness))
    for kind in ("staged", "rejected", "quarantine_release"):
        ledger.append(kind, sha256="ab" * 32)
    newest = witness_key("t", 3)
    head = witness.client.head_object(Bucket=witness.bucket, Key=newest)
    assert head["ObjectLockMode"] == "COMPLIANCE"
    with pytest.raises(ClientError, match="AccessDenied"):
        witness.client.delete_object(Bucket=witness.bucket, Key=newest, VersionId=head["VersionId"])
    witness.client.delete_object(Bucket=witness.bucket, Key=newest)  # only hides it
    assert not witness.exists(newest)
    store = forge(store.root, "t", history(store.root, "t")[:2], Notary(signer))  # cut back to 2
    keys = {signer.kid: signer.public_record()}
    report = verify_log(store, "t", keys, witness)
    failed = {c.name: c.detail for c in report.checks if not c.ok}
    assert set(failed) == {"ledger.witness"}
    assert "covers 3 events, the log has 2 (truncated)" in failed["ledger.witness"]


def test_witness_s3_audit_reports_superseded_versions_of_the_log(
    moto_endpoint: str, tmp_path: Path
) -> None:
    """On a versioned bucket, a batch overwritten in place and an index entry deleted (hidden
    behind a delete marker) are named by ``ledger.versions``; a superseded partial tile is not."""
    settings = Settings(
        home=tmp_path,
        s3_endpoint_url=moto_endpoint,
        s3_access_key_id=SecretStr("testing"),
        s3_secret_access_key=SecretStr("testing"),
    )
    store = S3Store(client_from_settings(settings), f"log-{uuid.uuid4().hex[:12]}")
    store.ensure_bucket(object_lock=True)  # versioning on, as deploy/s3 provisions it
    signer = rotate(tmp_path / "signing")
    ledger = Ledger(store, "t", Notary(signer))
    for kind in ("staged", "validated", "published"):
        ledger.append(kind, sha256="cd" * 32)
    keys = {signer.kid: signer.public_record()}
    clean = {c.name: c for c in verify_log(store, "t", keys).checks}
    assert clean["ledger.versions"].ok, clean
    store.put("ledger/t/batch/000000000002.json", store.get("ledger/t/batch/000000000002.json"))
    store.delete(f"ledger/t/by-doc/{'cd' * 32}/{1:012d}")
    failed = {c.name: c.detail for c in verify_log(store, "t", keys).checks if not c.ok}
    assert "ledger/t/batch/000000000002.json has 2 versions" in failed["ledger.versions"]
    assert "by-doc" in failed["ledger.versions"] and ".p/" not in failed["ledger.versions"]
