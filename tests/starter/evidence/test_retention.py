"""Evidence goes only after its period and an owner's sign-off, and leaves signed evidence.

A real scan is published and a forged submission quarantined on the real
pipeline, with a witness folder; approval goes through ``custody retention
approve``; the deletion is run with the clock past the policy's period (the
one thing the test moves), and the log is then checked by ``custody audit verify``.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custody import ids
from custody.ledger.checkpoints import notary_from_settings
from custody.ledger.events import Ledger, notarize
from custody.ledger.signing import public_keys, signer_from_settings
from custody.operators import Role
from custody.settings import Settings
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from starter.client.submit import submit, wait
from starter.evidence.retention import DELETED, deletion_record, evidence_keys, policies
from starter.evidence.retention_apply import Retention
from starter.evidence.trust import TrustAnchors
from tests.helpers import Rig, custody_cli, publish_scan
from tests.identities import as_person


def _retention(settings: Settings, store: ObjectStore, now: datetime) -> Retention:
    notarize(store, notary_from_settings(settings))
    keys = TrustAnchors.from_settings(settings).trusted(public_keys(store))
    return Retention(store, policies(settings), keys, signer_from_settings(settings), now)


async def test_retention_apply_deletes_only_approved_expired_evidence_with_log_evidence(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retained before the period; after it, deleted with every key and hash in the log."""
    tenant = rig.tenant
    monkeypatch.setenv("CUSTODY_WITNESS_DIR", str(rig.home / "witness"))
    settings = rig.settings()
    scan = rig.scan()
    qsha = hashlib.sha256(scan + b"\1").hexdigest()
    async with rig.pipeline(settings) as custody:
        sha = await publish_scan(custody, rig.corpus, tenant)
        custody.store.create(ids.intake_key(qsha, tenant), scan)  # quarantined: HASH_MISMATCH
        await submit(custody, scan + b"\1", tenant=tenant)
        await wait(custody, qsha, tenant=tenant)
    store, ledger = custody.store, Ledger(custody.store, tenant)
    # Every append was checkpointed as it was integrated, the OCR worker's included.
    assert ledger.checkpoint_size() == ledger.head()
    args = ("retention", "approve", sha, "--policy", "evidence")
    owner = as_person(settings, "owner", Role.ADMIN, store=store)
    rc, approved = await custody_cli(owner, *args, tenant=tenant)
    assert rc == 0 and approved["days"] == 2557, approved
    assert Ledger(store, tenant).checkpoint_size() == Ledger(store, tenant).head()  # the CLI
    rc, early = await custody_cli(owner, "retention", "apply", tenant=tenant)
    assert rc == 0 and [d["state"] for d in early["dispositions"]] == ["retained"], early
    held = evidence_keys(store, qsha, tenant)
    doomed = {
        k: hashlib.sha256(store.get(k)).hexdigest() for k in evidence_keys(store, sha, tenant)
    }
    assert ids.record_key(sha, tenant) in doomed and ids.source_key(sha, tenant) in doomed

    later = _retention(settings, store, datetime.now(UTC) + timedelta(days=2558))
    [gone] = later.apply(tenant)
    assert gone.state == "deleted" and gone.objects == len(doomed)
    assert not any(store.exists(k) for k in doomed)
    assert held and all(store.exists(k) for k in held)  # never approved: untouched
    record = deletion_record(store, tenant, sha)
    assert record is not None and record.objects == doomed
    assert (record.approved_by, record.policy) == ("owner", "evidence")
    [again] = later.apply(tenant)  # a second pass finishes nothing twice
    assert again.seq == gone.seq
    assert [e.kind for e in ledger.for_document(sha)].count(DELETED) == 1
    rc, audit = await custody_cli(settings, "audit", "verify", tenant=tenant)
    assert rc == 0 and audit["ok"], audit


def test_retention_deletion_record_is_none_for_a_document_never_deleted(tmp_path: Path) -> None:
    """The verify hook answers None when the log holds no deletion of the document."""
    store = LocalStore(tmp_path)
    Ledger(store, "t").append("published", sha256="6" * 64)
    assert deletion_record(store, "t", "6" * 64) is None
