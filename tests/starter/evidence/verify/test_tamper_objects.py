"""One byte of every object a document has, altered in turn: each is caught by its named check.

A real scan published through the real pipeline (dev server, the session's
engine) and a rejected document concluded beside it, once for the session
(``tests/published.py``), are copied for the module and the scan released once;
each case alters one object in its own copy of the store and runs
``verify_document`` with the trust anchor taken from the settings (the local
signing keys).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody import ids
from custody.canonical import canonical_json
from custody.ledger.events import Ledger
from custody.ledger.signing import PUBLIC_PREFIX, public_keys, rotate
from custody.models import SignedRecord
from custody.settings import Settings
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from custody.stores.s3 import S3Store
from starter.evidence.trust import TrustAnchors, fingerprint
from starter.evidence.verify.document import verify_document
from tests.custody.ledger.forge import replace_event
from tests.custody.stores.test_store_contract import _s3_store
from tests.helpers import custody_cli, running_pipeline
from tests.published import Published, copy_published


class Docs:
    def __init__(
        self, settings: Settings, tenant: str, published: str, rejected: str, release: str
    ) -> None:
        self.settings, self.tenant = settings, tenant
        self.published, self.rejected, self.release = published, rejected, release


@pytest.fixture(scope="module")
async def docs(
    temporal_client: Client,
    published_once: Published,
    tmp_path_factory: pytest.TempPathFactory,
    ocr_engine: OcrEngine,
) -> Docs:
    home = tmp_path_factory.mktemp("tamper")
    p = copy_published(published_once, home)  # a published and a rejected document
    settings, tenant = p.settings, p.tenant
    async with running_pipeline(temporal_client, settings, ocr_engine, with_ocr_worker=False):
        # A release of the published document, so its receipt is one of its objects
        # (to a recipient of this module's own: the copies share the tenant).
        outbox = str(home / "outbox")
        rc, _ = await custody_cli(
            settings, "recipients", "add", "clinic-t", "--outbox", outbox, tenant=tenant
        )
        assert rc == 0
        rc, answer = await custody_cli(
            settings, "release", p.sha256, "--to", "clinic-t", "--wait", tenant=tenant
        )
        assert rc == 0, answer
    return Docs(settings, tenant, p.sha256, p.rejected, str(answer["release_id"]))


def _copy(docs: Docs, tmp_path: Path) -> LocalStore:
    shutil.copytree(docs.settings.objects_dir, tmp_path / "objects")
    return LocalStore(tmp_path / "objects")


def _failed(store: LocalStore, docs: Docs, sha256: str) -> set[str]:
    anchors = TrustAnchors.from_settings(docs.settings)
    report = verify_document(store, public_keys(store), sha256, docs.tenant, anchors=anchors)
    return {c.name for c in report.checks if not c.ok}


def _flip(path: Path, offset: int = -2) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _replace(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data, old
    path.write_bytes(data.replace(old, new, 1))


def _record(s: ObjectStore, d: Docs) -> SignedRecord:
    return SignedRecord.model_validate_json(s.get(ids.record_key(d.published, d.tenant)))


def _packet_marker(s: LocalStore, d: Docs) -> Path:
    event = _record(s, d).record.packet_event
    assert event is not None
    return s.root / f"ledger/{d.tenant}/by-doc/{d.published}/{event.seq:012d}"


def _flip_validated_event(s: LocalStore, d: Docs, offset: int) -> None:
    """One byte of the record's ``validated`` event flipped where it sits, in its bundle."""
    event = _record(s, d).record.packet_event
    assert event is not None
    entry = bytearray(Ledger(s, d.tenant).entry(event.seq))
    entry[offset] ^= 0x01
    replace_event(s, d.tenant, event.seq, bytes(entry))


def _repaged(s: LocalStore, d: Docs, tmp: Path) -> None:
    """The record's page count changed in place: caught by its signature and by the ledger."""
    _replace(s.root / ids.record_key(d.published, d.tenant), b'"pages":1', b'"pages":2')


def _resign_with_rogue_key(s: LocalStore, d: Docs, tmp: Path) -> None:
    """A store insider's forgery: a changed record, signed by a key they published."""
    rogue = rotate(tmp / "rogue-signing")
    rogue.publish(s)
    signed = _record(s, d)
    record = signed.record.model_copy(update={"pages": signed.record.pages + 1})
    forged = SignedRecord.model_validate(
        {"record": record, "signature": rogue.sign(canonical_json(record)).model_dump()}
    )
    (s.root / ids.record_key(d.published, d.tenant)).write_bytes(canonical_json(forged))


def _key_record(s: LocalStore, d: Docs) -> Path:
    return s.root / f"{PUBLIC_PREFIX}{_record(s, d).signature.kid}.json"


Tamper = Callable[[LocalStore, Docs, Path], None]
P = "published"
CASES: dict[str, tuple[Tamper, str, str]] = {
    "source": (
        lambda s, d, t: _flip(s.root / ids.source_key(d.published, d.tenant)),
        "source.hash",
        P,
    ),
    "text": (lambda s, d, t: _flip(s.root / _record(s, d).record.text_key), "text.checksum", P),
    "pages": (
        lambda s, d, t: _flip(s.root / _record(s, d).record.pages_key, 10),
        "pages.checksum",
        P,
    ),
    "searchable pdf": (
        lambda s, d, t: _flip(s.root / str(_record(s, d).record.pdf_key), 1000),
        "pdf.checksum",
        P,
    ),
    "record value": (_repaged, "record.signature", P),
    "record bytes not canonical": (
        lambda s, d, t: _replace(s.root / ids.record_key(d.published, d.tenant), b",", b", "),
        "record.canonical",
        P,
    ),
    "record against the ledger": (_repaged, "record.ledger", P),
    "evidence packet": (
        lambda s, d, t: _flip(s.root / ids.packet_key(d.published, d.tenant), 20),
        "packet.hash",
        P,
    ),
    "index entry altered": (
        lambda s, d, t: _write(_packet_marker(s, d), b"x"),
        "index.entries",
        P,
    ),
    "index entry removed": (lambda s, d, t: _packet_marker(s, d).unlink(), "index.entries", P),
    "ledger event": (lambda s, d, t: _flip_validated_event(s, d, 30), "ledger.chain", P),
    "signing key record": (
        lambda s, d, t: _replace(_key_record(s, d), b'"development":true', b'"development":false'),
        "record.signature",
        P,
    ),
    "re-signed with a rogue key": (_resign_with_rogue_key, "record.signature", P),
    "release receipt": (
        lambda s, d, t: _replace(
            s.root / eg.receipt_key(d.tenant, d.release), b'"signed_at":"2', b'"signed_at":"1'
        ),
        "release.receipt.signature",
        P,
    ),
    "released file": (
        lambda s, d, t: _flip(
            next((s.root / eg.releases_prefix(d.tenant) / d.release / "files").iterdir()), 100
        ),
        "release.files.hash",
        P,
    ),
    "outcome": (
        lambda s, d, t: _replace(
            next((s.root / ids.outcome_prefix(d.rejected, d.tenant)).iterdir()),
            b'"concluded_at":"2',
            b'"concluded_at":"1',
        ),
        "outcome.hash",
        "rejected",
    ),
}


def test_tamper_untouched_documents_pass_every_check(docs: Docs) -> None:
    """The published and the rejected document verify, with every object kind checked."""
    store = LocalStore(docs.settings.objects_dir)
    anchors = TrustAnchors.from_settings(docs.settings)
    keys = public_keys(store)
    report = verify_document(store, keys, docs.published, docs.tenant, anchors=anchors)
    assert report.ok, report
    assert {c.name for c in report.checks} >= {
        "record.canonical",
        "record.signature",
        "record.ledger",
        "packet.hash",
        "packet.subject",
        "source.hash",
        "text.checksum",
        "pages.checksum",
        "pdf.checksum",
        "index.entries",
        "ledger.chain",
        "release.receipt.signature",
        "release.files.hash",
    }
    rejected = verify_document(store, keys, docs.rejected, docs.tenant, anchors=anchors)
    assert rejected.ok and "outcome.hash" in {c.name for c in rejected.checks}, rejected


@pytest.mark.parametrize("case", list(CASES))
def test_tamper_each_object_kind_is_detected_by_name(docs: Docs, tmp_path: Path, case: str) -> None:
    """Altering one object fails verification, and the failing check names that object."""
    store = _copy(docs, tmp_path)
    tamper, expected, which = CASES[case]
    tamper(store, docs, tmp_path)
    sha256 = docs.published if which == P else docs.rejected
    assert expected in _failed(store, docs, sha256)


def test_tamper_a_pinned_fingerprint_excludes_the_stores_own_key(
    docs: Docs, tmp_path: Path
) -> None:
    """Pinned to another key, the genuine record and receipt fail: store keys grant nothing."""
    store = LocalStore(docs.settings.objects_dir)
    other = rotate(tmp_path / "other")
    anchors = TrustAnchors.pinned([fingerprint(other.public)])
    report = verify_document(
        store, public_keys(store), docs.published, docs.tenant, anchors=anchors
    )
    bad = {c.name: c.detail for c in report.checks if not c.ok}
    assert set(bad) == {"record.signature", "release.receipt.signature", "ledger.inclusion"}
    assert bad["record.signature"].startswith("KEY_UNTRUSTED")


def _versioned_copy(docs: Docs, endpoint: str) -> S3Store:
    """The published objects, created one by one in a fresh bucket with versioning on."""
    store = _s3_store(endpoint)
    store.client.put_bucket_versioning(
        Bucket=store.bucket, VersioningConfiguration={"Status": "Enabled"}
    )
    root = docs.settings.objects_dir
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        store.create(path.relative_to(root).as_posix(), path.read_bytes())
    return store


def _versions_detail(store: S3Store, docs: Docs) -> str:
    anchors = TrustAnchors.from_settings(docs.settings)
    report = verify_document(
        store, public_keys(store), docs.published, docs.tenant, anchors=anchors
    )
    found = [c for c in report.checks if c.name == "store.versions"]
    assert found, [c.name for c in report.checks]
    return "" if found[0].ok else found[0].detail


def test_tamper_s3_overwritten_and_hidden_versions_are_reported(
    docs: Docs, moto_endpoint: str
) -> None:
    """On a versioned bucket (moto over HTTP) a rewritten packet, a rolled-back record and a
    deleted text each show, though the current bytes of the first two still hash right."""
    store = _versioned_copy(docs, moto_endpoint)
    assert _versions_detail(store, docs) == ""
    packet = ids.packet_key(docs.published, docs.tenant)
    store.put(packet, store.get(packet))  # the same bytes again: still a second version
    text = _record(store, docs).record.text_key
    store.delete(text)
    # A rollback: a forged record put over the real one, then the real one put back.
    record = ids.record_key(docs.published, docs.tenant)
    original = store.get(record)
    store.put(record, original.replace(b'"pages":1', b'"pages":2'))
    store.put(record, original)
    detail = _versions_detail(store, docs)
    assert f"{packet} has 2 versions (superseded)" in detail
    assert f"{record} has 3 versions (superseded)" in detail
    assert f"{text} deleted (hidden by a delete marker)" in detail


async def test_tamper_cli_verify_names_the_failed_check_and_exits_8(
    docs: Docs, tmp_path: Path
) -> None:
    """``custody verify SHA --trust FPR``: exit 0 pinned to the real key, 8 naming
    ``record.signature`` when the record was re-signed by a key published into the store."""
    settings = docs.settings.model_copy(update={"home": tmp_path})
    shutil.copytree(docs.settings.signing_path, tmp_path / "signing")
    shutil.copytree(docs.settings.objects_dir, settings.objects_dir)
    store = LocalStore(settings.objects_dir)
    real = next(iter(TrustAnchors.from_settings(docs.settings).fingerprints))
    rc, out = await custody_cli(
        settings, "verify", docs.published, "--trust", real, tenant=docs.tenant
    )
    assert rc == 0 and out["ok"], out
    _resign_with_rogue_key(store, docs, tmp_path)
    rc, out = await custody_cli(
        settings, "verify", docs.published, "--trust", real, tenant=docs.tenant
    )
    failed = [c["name"] for r in out["reports"] for c in r["checks"] if not c["ok"]]
    assert rc == 8 and "record.signature" in failed, out
