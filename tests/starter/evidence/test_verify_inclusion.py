"""``custody verify``: each of a document's events proven in the signed log, against pinned keys.

A real scan, published once for the session (``tests.published``), copied for the module; each
CLI case alters its own copy of the store and signing folder. The log-level cases
build a small notarised ledger directly, with a witness folder beside it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from custody import ids
from custody.errors import Code, ConfigurationError
from custody.ledger.checkpoints import Notary
from custody.ledger.events import Ledger
from custody.ledger.signing import Signer, rotate
from custody.ledger.tiles import bundle_key, decode_bundle, encode_bundle
from custody.models import SignedRecord
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.cli.output import Exit
from starter.evidence.trust import TrustAnchors, fingerprint
from starter.evidence.verify.proofs import LogProofs
from tests.custody.ledger.forge import forge, history
from tests.helpers import custody_cli
from tests.published import Published, copy_published

DOC, OTHER = "a" * 64, "b" * 64


@pytest.fixture(scope="module")
def published(published_once: Published, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """The session's published phototest scan, in this module's copy (``tests.published``)."""
    return copy_published(published_once, tmp_path_factory.mktemp("inclusion"))


def _copy(p: Published, home: Path) -> tuple[Settings, LocalStore]:
    """The published store and signing folder under a home of the test's own."""
    settings = p.settings.model_copy(update={"home": home})
    shutil.copytree(p.settings.signing_path, settings.signing_path)
    shutil.copytree(p.settings.objects_dir, settings.objects_dir)
    return settings, LocalStore(settings.objects_dir)


def _packet_seq(store: LocalStore, p: Published) -> int:
    """The sequence number of the document's ``validated`` event, the one its record pins."""
    record = SignedRecord.model_validate_json(store.get(ids.record_key(p.sha256, p.tenant))).record
    assert record.packet_event is not None
    return record.packet_event.seq


def _edit_bundle(
    store: LocalStore, tenant: str, change: Callable[[list[bytes]], list[bytes]]
) -> None:
    """An insider edits the log's (one, partial) entry bundle in place."""
    size = Ledger(store, tenant).size()
    assert size < 256
    path = store.root / bundle_key(f"ledger/{tenant}/", 0, size)
    path.write_bytes(encode_bundle(change(decode_bundle(path.read_bytes()))))


def _failed(out: dict[str, object]) -> dict[str, str]:
    reports = out["reports"]
    assert isinstance(reports, list)
    return {c["name"]: c["detail"] for r in reports for c in r["checks"] if not c["ok"]}


async def test_verify_inclusion_untouched_document_is_proven_with_the_local_keyring(
    published: Published, tmp_path: Path
) -> None:
    """Every event of a published document is in the signed log; the report names its trust."""
    settings, _ = _copy(published, tmp_path)
    rc, out = await custody_cli(settings, "verify", published.sha256, tenant=published.tenant)
    assert rc == Exit.OK and out["ok"], out
    report = out["reports"][0]
    assert report["trust"] == "local-keyring"
    inclusion = [c for c in report["checks"] if c["name"] == "ledger.inclusion"]
    assert inclusion and inclusion[0]["ok"] and "events in checkpoint" in inclusion[0]["detail"]


async def test_verify_inclusion_deleted_event_fails_ledger_inclusion(
    published: Published, tmp_path: Path
) -> None:
    """The document's packet event deleted from the store: its leaf is not in the checkpoint."""
    settings, store = _copy(published, tmp_path)
    seq = _packet_seq(store, published)
    _edit_bundle(store, published.tenant, lambda e: [*e[: seq - 1], *e[seq:]])
    rc, out = await custody_cli(settings, "verify", published.sha256, tenant=published.tenant)
    failed = _failed(out)
    assert rc == Exit.VERIFY_FAILED and "ledger.inclusion" in failed, out
    assert f"event {seq} (leaf {seq - 1}) not in checkpoint" in failed["ledger.inclusion"]
    assert published.sha256 not in failed["ledger.inclusion"]  # seqs and leaves, no hashes


async def test_verify_inclusion_reordered_events_fail_ledger_inclusion(
    published: Published, tmp_path: Path
) -> None:
    """Two of the document's events swapped in place: neither proves as its leaf any more."""
    settings, store = _copy(published, tmp_path)
    at = _packet_seq(store, published) - 1  # its place in the bundle
    _edit_bundle(store, published.tenant, lambda e: [*e[: at - 1], e[at], e[at - 1], *e[at + 1 :]])
    rc, out = await custody_cli(settings, "verify", published.sha256, tenant=published.tenant)
    failed = _failed(out)
    assert rc == Exit.VERIFY_FAILED and "not in checkpoint" in failed["ledger.inclusion"], out


async def test_verify_inclusion_checkpoint_signed_by_a_rogue_key_fails(
    published: Published, tmp_path: Path
) -> None:
    """The newest checkpoint re-signed by a key published into the store is not trusted."""
    settings, store = _copy(published, tmp_path)
    rogue = rotate(tmp_path / "rogue")
    rogue.publish(store)
    ledger = Ledger(store, published.tenant)
    Notary(rogue).seal(ledger, ledger.size())  # the same tree head, signed by the rogue key
    rc, out = await custody_cli(settings, "verify", published.sha256, tenant=published.tenant)
    failed = _failed(out)
    assert rc == Exit.VERIFY_FAILED, out
    assert failed["ledger.inclusion"] == "the newest checkpoint not signed by a trusted key"


async def test_verify_inclusion_all_reports_a_corrupt_record_and_verifies_the_rest(
    published: Published, tmp_path: Path
) -> None:
    """``verify --all``: a record that no longer parses is its document's FAIL
    (``record.parse``), the tenant's published documents still pass, and the exit status is 8."""
    settings, store = _copy(published, tmp_path)
    broken = "c" * 64
    (store.root / ids.record_key(broken, published.tenant)).write_bytes(b'{"record": {"sha')
    rc, out = await custody_cli(settings, "verify", "--all", tenant=published.tenant)
    good = (published.sha256, published.other, published.discharge)  # the rejected one: no record
    assert rc == Exit.VERIFY_FAILED and out["passed"] == len(good) and out["failed"] == 1, out
    by_subject = {r["subject"]: r for r in out["reports"]}
    bad = by_subject[ids.workflow_id(broken, published.tenant)]
    assert "record.parse" in {c["name"] for c in bad["checks"] if not c["ok"]}
    assert all(by_subject[ids.workflow_id(sha, published.tenant)]["ok"] for sha in good)


async def test_verify_inclusion_production_without_a_pinned_key_is_refused(
    published: Published, tmp_path: Path
) -> None:
    """CUSTODY_ENV=production with no CUSTODY_TRUST_FPRS nor --trust: TRUST_ANCHOR_MISSING,
    before any document is read; the local keyring is not a fallback there."""
    settings, _ = _copy(published, tmp_path)
    with pytest.raises(ConfigurationError) as err:
        TrustAnchors.from_settings(settings.model_copy(update={"env": "production"}))
    assert err.value.code is Code.TRUST_ANCHOR_MISSING
    production = settings.model_copy(update={"env": "production"})
    rc, out = await custody_cli(production, "verify", published.sha256, tenant=published.tenant)
    assert rc == Exit.CONFIG and out["error"] == Code.TRUST_ANCHOR_MISSING, out


def _log(tmp_path: Path) -> tuple[Ledger, Signer, LocalStore]:
    """A notarised ledger of two documents' events, each append witnessed."""
    signer, witness = rotate(tmp_path / "signing"), LocalStore(tmp_path / "witness")
    ledger = Ledger(LocalStore(tmp_path / "objects"), "t", Notary(signer, witness))
    for sha256 in (DOC, OTHER, DOC, OTHER, DOC):
        ledger.append("staged", sha256=sha256)
    return ledger, signer, witness


def _mine(ledger: Ledger) -> set[int]:
    return {e.seq for e in ledger.for_document(DOC)}


def test_verify_inclusion_archived_checkpoint_proves_the_documents_events(tmp_path: Path) -> None:
    """The proof is against the newest checkpoint, every archived note holds; later events
    are only counted."""
    ledger, signer, witness = _log(tmp_path)
    keys = {signer.kid: signer.public_record()}
    ledger.notary = None  # an append nobody sealed: beyond every checkpoint
    ledger.append("exported", sha256=DOC)
    checks = LogProofs(witness).checks(ledger, _mine(ledger), keys)
    assert all(c.ok for c in checks), checks
    assert checks[0].detail == "3 events in checkpoint 5; 1 after it, not yet checkpointed"
    assert "5 archived notes hold" in checks[1].detail


def test_verify_inclusion_archive_catches_a_rewritten_store_log(tmp_path: Path) -> None:
    """Another document's event altered and the log rebuilt and re-signed by the same key:
    the store agrees with itself, the archived notes still do not."""
    ledger, signer, witness = _log(tmp_path)
    keys = {signer.kid: signer.public_record()}
    events = history(tmp_path / "objects", "t")
    events[1] = events[1].model_copy(update={"kind": "stagex"})
    store = forge(tmp_path / "objects", "t", events, Notary(signer))
    forged = Ledger(store, "t")
    assert all(c.ok for c in LogProofs().checks(forged, _mine(forged), keys))  # fooled alone
    inclusion, archived = LogProofs(witness).checks(forged, _mine(forged), keys)
    assert inclusion.ok and not archived.ok
    assert "archived checkpoint 2 disagrees with the log (rewritten)" in archived.detail


def test_verify_inclusion_untrusted_keys_prove_nothing(tmp_path: Path) -> None:
    """Pinned to another key, the genuine checkpoint is not trusted: KEY-less proofs fail."""
    ledger, signer, witness = _log(tmp_path)
    other = rotate(tmp_path / "other")
    assert (
        TrustAnchors.pinned([fingerprint(other.public)]).trusted(
            {signer.kid: signer.public_record()}
        )
        == {}
    )
    check = LogProofs(witness).check(ledger, _mine(ledger), {})
    assert not check.ok and check.detail == "the newest checkpoint not signed by a trusted key"
