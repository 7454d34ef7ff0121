"""Signed references: a forged start or a tampered reference never opens another tenant's object.

The unit tests pin ``custody.refs``; the workflow tests start ``DocumentWorkflow``
directly (as someone with Temporal access but no keyring would) against real
workers and a sealed store. ``SpyStore`` only records which keys were touched,
so a test can prove tenant B's objects were never read; it changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.output import OutputActivities
from custody import ids
from custody.errors import NON_RETRYABLE_CODES, QUARANTINE_CODES, Code
from custody.keys import keyring as keys
from custody.keys.keyring import Keyring
from custody.models import CheckInput, DocState, DocumentInput, PageText
from custody.refs import RefInvalid, RefKeys
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from tests.helpers import make_settings, running_pipeline
from workflows.document import DocumentWorkflow

SHA = "a" * 64
OTHER_SHA = "b" * 64


@pytest.fixture
def ring(tmp_path: Path) -> Keyring:
    return keys.init_keyring(tmp_path / "keys", development=True)


def test_refs_signed_reference_verifies(ring: Keyring) -> None:
    """A reference signed for (key, tenant, hash) passes the check unchanged."""
    refs = RefKeys(ring)
    key = ids.intake_key(SHA, "clinic-a")
    sig = refs.sign(key, "clinic-a", SHA)
    assert sig is not None and sig.startswith(max(ring.payload) + ".")
    assert refs.check(key, "clinic-a", SHA, sig) == key


@pytest.mark.parametrize(
    ("key", "tenant", "sha"),
    [
        (ids.intake_key(SHA, "clinic-b"), "clinic-b", SHA),  # another tenant's key, its tenant
        (ids.intake_key(SHA, "clinic-b"), "clinic-a", SHA),  # another tenant's key
        (ids.intake_key(OTHER_SHA, "clinic-a"), "clinic-a", OTHER_SHA),  # another document
        (ids.source_key(SHA, "clinic-a"), "clinic-a", SHA),  # another object of the document
    ],
)
def test_refs_signature_does_not_transfer(ring: Keyring, key: str, tenant: str, sha: str) -> None:
    """clinic-a's intake signature refused on any other key, tenant or hash: REF_INVALID."""
    refs = RefKeys(ring)
    sig = refs.sign(ids.intake_key(SHA, "clinic-a"), "clinic-a", SHA)
    with pytest.raises(RefInvalid, match="REF_INVALID"):
        refs.check(key, tenant, sha, sig)


def test_refs_bad_missing_or_unknown_signature_refused(ring: Keyring) -> None:
    """A flipped MAC, an unknown key ID and no signature at all are each refused."""
    refs = RefKeys(ring)
    key = ids.intake_key(SHA, "clinic-a")
    sig = refs.sign(key, "clinic-a", SHA)
    assert sig is not None
    kid, mac = sig.split(".")
    flipped = f"{kid}.{'0' if mac[0] != '0' else '1'}{mac[1:]}"
    for bad in (flipped, f"k19700101-unknown.{mac}", None):
        with pytest.raises(RefInvalid):
            refs.check(key, "clinic-a", SHA, bad)


@pytest.mark.parametrize("mac", ["é" * 64, "\ud800" * 64, "0" * 63 + "ß", ""])
def test_refs_non_ascii_signature_is_refused_not_a_fault(ring: Keyring, mac: str) -> None:
    """A MAC with non-ASCII characters (or a lone surrogate) is REF_INVALID, never the
    TypeError ``compare_digest`` raises on such a str, which would be retried."""
    refs = RefKeys(ring)
    key = ids.intake_key(SHA, "clinic-a")
    kid = max(ring.payload)
    with pytest.raises(RefInvalid, match="REF_INVALID"):
        refs.check(key, "clinic-a", SHA, f"{kid}.{mac}")


def test_refs_old_signatures_survive_rotation(ring: Keyring, tmp_path: Path) -> None:
    """A reference signed before ``custody keys rotate`` still verifies after it."""
    key = ids.source_key(SHA, None)
    sig = RefKeys(ring).sign(key, None, SHA)
    keys.rotate(tmp_path / "keys")
    fresh = keys.require_dir_keyring(tmp_path / "keys")
    new_sig = RefKeys(fresh).sign(key, None, SHA)
    assert new_sig != sig and new_sig is not None
    assert RefKeys(fresh).check(key, None, SHA, sig) == key


def test_refs_unsigned_accepted_only_inside_the_drain_window(ring: Keyring) -> None:
    """Unsigned (pre-upgrade) references pass only before CUSTODY_REFS_UNSIGNED_UNTIL, and
    even then only for the document's own tenant and hash."""
    key = ids.intake_key(SHA, "clinic-a")
    ring.unsigned_refs_until = datetime.now(UTC) + timedelta(hours=1)
    assert RefKeys(ring).check(key, "clinic-a", SHA, None) == key
    with pytest.raises(RefInvalid):
        RefKeys(ring).check(ids.intake_key(SHA, "clinic-b"), "clinic-a", SHA, None)
    ring.unsigned_refs_until = datetime.now(UTC) - timedelta(seconds=1)
    with pytest.raises(RefInvalid):
        RefKeys(ring).check(key, "clinic-a", SHA, None)


def test_refs_without_keyring_still_bind_tenant_and_hash() -> None:
    """With no keyring (plain development) nothing is signed, but a key outside the
    document's tenant and hash is still refused."""
    refs = RefKeys(None)
    assert refs.sign(ids.intake_key(SHA, None), None, SHA) is None
    assert refs.check(ids.intake_key(SHA, None), None, SHA, None)
    with pytest.raises(RefInvalid):
        refs.check(ids.intake_key(SHA, "clinic-b"), None, SHA, None)
    with pytest.raises(RefInvalid):
        refs.check("intake/_", None, SHA, None)


def test_refs_code_is_quarantined_and_never_retried() -> None:
    """REF_INVALID is a quarantine code (a person looks), and non-retryable."""
    assert Code.REF_INVALID in QUARANTINE_CODES
    assert Code.REF_INVALID.value in NON_RETRYABLE_CODES


class SpyStore(SealedStore):
    """A SealedStore that records every key it is asked about (observation only)."""

    def __init__(self, inner: LocalStore, keyring: Keyring) -> None:
        super().__init__(inner, keyring)
        self.touched: list[str] = []

    def get(self, key: str) -> bytes:
        self.touched.append(key)
        return super().get(key)

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        self.touched.append(key)
        return super().download(key, dst, chunk_size)

    def exists(self, key: str) -> bool:
        self.touched.append(key)
        return super().exists(key)

    def size(self, key: str) -> int:
        self.touched.append(key)
        return super().size(key)

    def delete(self, key: str) -> None:
        self.touched.append(key)
        super().delete(key)

    def list(self, prefix: str) -> Iterator[str]:
        self.touched.append(prefix)
        return super().list(prefix)


def _forged(sha: str, tenant: str, key: str, sig: str | None, queue: str) -> DocumentInput:
    return DocumentInput(
        sha256=sha,
        tenant=tenant,
        intake_key=key,
        intake_sig=sig,
        size_bytes=10,
        submitted_at=datetime.now(UTC),
        io_task_queue=queue,
        ocr_task_queue=queue + "-ocr-unused",
    )


async def test_refs_forged_starts_are_refused_and_other_tenant_untouched(
    temporal_client: Client, temporal_address: str, tmp_path: Path, ring: Keyring, tenant: str
) -> None:
    """Workflows started directly with tenant B's key and signature, a bad signature, or
    none are quarantined REF_INVALID, and no object of tenant B is ever touched."""
    settings = make_settings(tmp_path, temporal_address)
    store = SpyStore(LocalStore(settings.objects_dir), ring)
    victim = f"{tenant}-b"
    body = b"%PDF-1.4 tenant B's private referral"
    sha = hashlib.sha256(body).hexdigest()
    victim_key = ids.intake_key(sha, victim)
    store.create(victim_key, body)
    victim_sig = RefKeys(ring).sign(victim_key, victim, sha)
    cases: dict[str, tuple[str | None, str | None]] = {  # key None: the attacker's own
        "other tenant's key and signature": (victim_key, victim_sig),
        "own key, bad signature": (None, f"{max(ring.payload)}.{'0' * 64}"),
        "own key, no signature": (None, None),
    }
    async with running_pipeline(
        temporal_client,
        settings,
        engine=None,
        store=store,
        with_ocr_worker=False,  # type: ignore[arg-type]
    ):
        for i, (name, (key, sig)) in enumerate(cases.items()):
            attacker = f"{tenant}-a{i}"
            handle = await temporal_client.start_workflow(
                DocumentWorkflow.run,
                _forged(
                    sha, attacker, key or ids.intake_key(sha, attacker), sig, settings.io_task_queue
                ),
                id=ids.workflow_id(sha, attacker),
                task_queue=settings.io_task_queue,
            )
            res = await handle.result()
            assert (res.state, res.code) == (DocState.QUARANTINED, "REF_INVALID"), name
            assert res.attempts.get("stage") == 1, name  # refused at once, never retried
    assert store.touched and not [k for k in store.touched if f"/{victim}/" in k]
    assert store.get(victim_key) == body  # still there, unchanged


def _page(n: int) -> bytes:
    return (
        PageText(page=n, width=1, height=1, text="x", words=[], mean_confidence=0.9, seconds=0.1)
        .model_dump_json()
        .encode()
    )


async def test_refs_tampered_page_reference_is_refused(tmp_path: Path, ring: Keyring) -> None:
    """A check whose page key was swapped for tenant B's page (A's signature kept) is refused
    with a non-retryable REF_INVALID before the page is opened."""
    store = SpyStore(LocalStore(tmp_path / "objects"), ring)
    refs = RefKeys(ring)
    mine = ids.work_page_key(SHA, "clinic-a", "run-a1", 0)
    theirs = ids.work_page_key(SHA, "clinic-b", "run-a1", 0)
    store.put(mine, _page(0))
    store.put(theirs, _page(0))
    sigs = refs.sign_all([mine], "clinic-a", SHA)
    check = OutputActivities(store, floor=0.1, review=0.5).check
    env = ActivityEnvironment()
    ok = env.run(check, _check_input([mine], sigs))
    assert ok.chars == 1
    store.touched.clear()
    with pytest.raises(ApplicationError) as err:
        env.run(check, _check_input([theirs], sigs))
    assert err.value.type == "REF_INVALID" and err.value.non_retryable
    assert theirs not in store.touched
    with pytest.raises(ApplicationError) as err:
        env.run(check, _check_input([mine], [sigs[0][:-4] + "0000"]))
    assert err.value.type == "REF_INVALID"


def _check_input(keys_: list[str], sigs: list[str]) -> Any:
    return CheckInput(
        sha256=SHA, tenant="clinic-a", expected_pages=1, page_keys=keys_, page_sigs=sigs
    )
