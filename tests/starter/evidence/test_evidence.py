"""Evidence that holds up: signed records, the ledger, verification, bundles.

One real document, published once for the session (real dev server, the
session's engine: ``tests/published.py``), is copied for the module; each
tampering case then works on its own copy of the store.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from custody import ids
from custody.ledger.events import Ledger
from custody.ledger.signing import local_public_keys, public_keys, rotate
from custody.models import SignedRecord
from custody.stores.local import LocalStore
from starter.evidence.bundle import export_bundle
from starter.evidence.trust import TrustAnchors, fingerprint
from starter.evidence.verify.document import verify_document, verify_ledger
from tests.custody.ledger.forge import bundle_file, replace_event, swap_events
from tests.published import Published, copy_published


@pytest.fixture(scope="module")
def published(published_once: Published, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """The session's published phototest scan (signed from scanner-7), in this module's copy."""
    return copy_published(published_once, tmp_path_factory.mktemp("evidence"))


def _copy(published: Published, tmp_path: Path) -> LocalStore:
    shutil.copytree(published.settings.objects_dir, tmp_path / "objects")
    return LocalStore(tmp_path / "objects")


def _failed(store: LocalStore, p: Published) -> set[str]:
    anchors = TrustAnchors.from_settings(p.settings)
    report = verify_document(store, public_keys(store), p.sha256, p.tenant, anchors=anchors)
    return {c.name for c in report.checks if not c.ok}


def test_evidence_published_document_verifies_with_every_check(published: Published) -> None:
    """Source hash, signature, text and page checksums and the ledger all pass."""
    store = LocalStore(published.settings.objects_dir)
    anchors = TrustAnchors.from_settings(published.settings)
    keys = public_keys(store)
    report = verify_document(store, keys, published.sha256, published.tenant, anchors=anchors)
    assert report.ok, report
    names = {c.name for c in report.checks}
    assert names >= {
        "record.signature",
        "source.hash",
        "text.checksum",
        "pages.checksum",
        "pdf.checksum",
        "ledger.packet",
        "ledger.published",
        "ledger.chain",
    }
    signed = SignedRecord.model_validate_json(
        store.get(ids.record_key(published.sha256, published.tenant))
    )
    assert signed.record.signer == {"station": "scanner-7"}
    assert signed.record.packet_event is not None and signed.record.model_hashes
    kinds = [e.kind for e in Ledger(store, published.tenant).for_document(published.sha256)]
    assert kinds == ["staged", "validated", "recognised", "published"]


def _flip(path: Path, offset: int = -2) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _record_path(store: LocalStore, p: Published) -> Path:
    return store.root / ids.record_key(p.sha256, p.tenant)


def _signed(store: LocalStore, p: Published) -> SignedRecord:
    return SignedRecord.model_validate_json(_record_path(store, p).read_bytes())


TAMPERS: dict[str, tuple[Callable[[LocalStore, Published], None], str]] = {
    "source byte": (lambda s, p: _flip(s.root / ids.source_key(p.sha256, p.tenant)), "source.hash"),
    "text byte": (lambda s, p: _flip(s.root / _signed(s, p).record.text_key), "text.checksum"),
    "searchable pdf byte": (
        lambda s, p: _flip(s.root / str(_signed(s, p).record.pdf_key), offset=1000),
        "pdf.checksum",
    ),
    "record byte": (
        lambda s, p: _record_path(s, p).write_bytes(
            _record_path(s, p).read_bytes().replace(b'"pages":1', b'"pages":2')
        ),
        "record.signature",
    ),
    "ledger event byte": (
        lambda s, p: replace_event(
            s,
            p.tenant,
            2,
            Ledger(s, p.tenant).entry(2).replace(b'"kind":"validated"', b'"kind":"validatex"'),
        ),
        "ledger.chain",
    ),
    "ledger event deleted": (lambda s, p: replace_event(s, p.tenant, 3, None), "ledger.chain"),
    "ledger events swapped": (lambda s, p: swap_events(s, p.tenant, 2, 3), "ledger.chain"),
}


@pytest.mark.parametrize("case", list(TAMPERS))
def test_evidence_tampering_is_detected_by_name(
    published: Published, tmp_path: Path, case: str
) -> None:
    """Each alteration fails verification, and the failing check names what was altered."""
    store = _copy(published, tmp_path)
    tamper, expected = TAMPERS[case]
    tamper(store, published)
    assert expected in _failed(store, published)


def test_evidence_ledger_tampering_fails_custody_audit_verify(
    published: Published, tmp_path: Path
) -> None:
    """``custody audit verify`` exits 8 and names the altered event."""
    store = _copy(published, tmp_path)
    _flip(bundle_file(store, published.tenant, 1), offset=30)
    env = {**os.environ, "CUSTODY_HOME": str(tmp_path), "CUSTODY_STORE_DIR": str(store.root)}
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", "audit", "verify", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 8, proc.stderr
    out = json.loads(proc.stdout)
    details = [c["detail"] for r in out["reports"] for c in r["checks"] if not c["ok"]]
    assert any("event 1" in d for d in details)


def test_evidence_truncated_ledger_tail_is_detected_by_checkpoint(
    published: Published, tmp_path: Path
) -> None:
    """Deleting the newest events leaves a shorter valid chain; the signed checkpoint exposes it."""
    store = _copy(published, tmp_path)
    top = Ledger(store, published.tenant).size()
    replace_event(store, published.tenant, top, None)
    folder = store.root / "ledger" / published.tenant
    (folder / "integrated").write_text(str(top - 1))
    for batch in (folder / "batch").iterdir():  # its batch too, or it is still in the log
        if int(batch.stem) == top:
            batch.unlink()
    store = LocalStore(store.root)  # another process, which never saw the longer log
    anchors = TrustAnchors.from_settings(published.settings)
    report = verify_ledger(store, public_keys(store), published.tenant, anchors=anchors)
    assert not report.ok and any("truncated" in c.detail for c in report.checks)


def test_evidence_bundle_verifies_with_the_documented_procedure_alone(
    published: Published, tmp_path: Path
) -> None:
    """The exported zip checks out with its own verify_bundle.py; a changed text fails it."""
    store = LocalStore(published.settings.objects_dir)
    bundle = export_bundle(
        store, published.sha256, published.tenant, tmp_path / "bundle.zip", actor="auditor"
    )
    folder = tmp_path / "unzipped"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(folder)
    script = (folder / "verify_bundle.py").read_text()
    assert "import custody" not in script and "from custody" not in script
    held = local_public_keys(published.settings.signing_path, None, production=False)
    pins = [arg for key in held for arg in ("--trust", fingerprint(key))]
    run = [sys.executable, "-I", str(folder / "verify_bundle.py"), *pins, str(folder)]
    good = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert good.returncode == 0 and good.stdout.strip().endswith("PASS"), good.stdout
    assert "PASS  pdf.checksum" in good.stdout  # the searchable PDF travels and is checked
    (folder / "searchable.pdf").write_bytes((folder / "searchable.pdf").read_bytes()[:-10])
    cut = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert cut.returncode == 1 and "FAIL  pdf.checksum" in cut.stdout
    (folder / "text.txt").write_text("something else")
    bad = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert bad.returncode == 1 and "FAIL  text.checksum" in bad.stdout


def test_evidence_rotated_key_still_verifies_old_records(
    published: Published, tmp_path: Path
) -> None:
    """After a rotation old records verify with the old published key; new ones with the new."""
    store = _copy(published, tmp_path)
    old_kid = _signed(store, published).signature.kid
    new = rotate(published.settings.signing_path.parent / f"rotated-{tmp_path.name}")
    new.publish(store)
    assert new.kid != old_kid and set(public_keys(store)) >= {old_kid, new.kid}
    assert _failed(store, published) == set()
    # A record signed by the new key verifies too, and an unknown key does not.
    body = b"checkpoint"
    from custody.ledger.signing import verify

    assert verify(body, new.sign(body), public_keys(store)) is None
    other = rotate(tmp_path / "unpublished")
    assert verify(body, other.sign(body), public_keys(store)) is not None


def _append_many(root: str, tenant: str, count: int) -> None:
    ledger = Ledger(LocalStore(Path(root)), tenant)
    for i in range(count):
        ledger.append("concurrency-probe", detail={"i": i, "pid": os.getpid()})


def test_evidence_concurrent_appends_from_processes_never_fork(tmp_path: Path) -> None:
    """Four processes appending at once leave one unbroken chain holding every event."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), "t", 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    store = LocalStore(tmp_path)
    assert Ledger(store, "t").sequence_numbers() == list(range(1, 101))
    assert verify_ledger(store, {}, "t", anchors=TrustAnchors.pinned([])).ok


class _CountingStore(LocalStore):
    """The real local store, counting reads, to show how much of the chain a lookup touches."""

    gets = 0

    def get(self, key: str) -> bytes:
        type(self).gets += 1
        return super().get(key)


def test_evidence_document_events_come_from_the_index_not_a_scan(tmp_path: Path) -> None:
    """One document's events are found by reading them, not the tenant's whole chain."""
    store = _CountingStore(tmp_path)
    ledger = Ledger(store, "t")
    mine = "a" * 64
    ledger.append("validated", sha256=mine)
    for n in range(150):
        ledger.append("validated", sha256=f"{n:064x}")
    ledger.append("published", sha256=mine)
    _CountingStore.gets = 0
    assert [e.kind for e in Ledger(store, "t").for_document(mine)] == ["validated", "published"]
    assert _CountingStore.gets < 10


def test_evidence_ledger_from_before_the_index_is_still_searched(tmp_path: Path) -> None:
    """Events written before the index existed are found by a scan; later ones by the index."""
    store = LocalStore(tmp_path)
    ledger = Ledger(store, "t")
    mine = "b" * 64
    ledger.append("validated", sha256=mine)
    ledger.append("validated", sha256="c" * 64)
    for marker in (tmp_path / "ledger" / "t" / "by-doc").rglob("*"):
        if marker.is_file():
            marker.unlink()
    (tmp_path / "ledger" / "t" / "index-from").write_text("3")  # as if indexing began at 3
    Ledger(store, "t").append("published", sha256=mine)
    assert [e.seq for e in Ledger(store, "t").for_document(mine)] == [1, 3]
    assert verify_ledger(store, {}, "t", anchors=TrustAnchors.pinned([])).ok
