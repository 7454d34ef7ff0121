"""Egress from the command line: recipients, policies, release, egress ls|verify|identify.

The session's published scan (``tests/published.py``), in this module's copy,
is released once through ``custody release --wait`` to a real outbox
directory; the read-only tests share that release. The tests that tamper with
it put every byte back before they end.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.canonical import canonical_json
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys, rotate
from custody.ledger.tiles import bundle_key
from custody.settings import Settings
from custody.state.egress import SignedReceipt, add_policy
from custody.stores.local import LocalStore
from starter.cli.egress import trust_anchor
from starter.cli.identify import identify
from starter.client.release import release, wait_release
from starter.evidence.verify.egress import verify_release
from tests.helpers import cli, custody_cli, running_pipeline
from tests.published import InHome, Published, copy_published

# Of this module alone: the copies of the session's store share the tenant, so a release
# to a recipient another module also uses would have the same release ID.
RECIPIENT = "clinic-e"


@dataclass
class Released(InHome):
    settings: Settings
    tenant: str
    sha256: str
    outbox: Path
    rc: int
    answer: dict[str, Any]

    @property
    def release_id(self) -> str:
        return str(self.answer["release_id"])

    @property
    def pdf(self) -> Path:
        return self.outbox / self.release_id / str(self.answer["files"][0]["name"])


@pytest.fixture(scope="module")
async def released(
    temporal_client: Client,
    published_once: Published,
    tmp_path_factory: pytest.TempPathFactory,
    ocr_engine: OcrEngine,
) -> Released:
    """The session's published scan, in this module's copy, released once here."""
    home = tmp_path_factory.mktemp("cli-egress")
    p = copy_published(published_once, home, egress_delivery_attempts=1)
    settings, tenant, outbox = p.settings, p.tenant, home / "outbox"
    async with running_pipeline(temporal_client, settings, ocr_engine, with_ocr_worker=False):
        rc, _ = await custody_cli(
            settings, "recipients", "add", RECIPIENT, "--outbox", str(outbox), tenant=tenant
        )
        assert rc == 0
        rc, answer = await custody_cli(
            settings, "release", p.sha256, "--to", RECIPIENT, "--wait", tenant=tenant
        )
    return Released(settings, tenant, p.sha256, outbox, rc, answer)


def _outbox_files(outbox: Path) -> list[str]:
    return sorted(str(p.relative_to(outbox)) for p in outbox.rglob("*") if p.is_file())


async def test_egress_cli_release_wait_answers_the_contract(released: Released) -> None:
    """``release --wait --json``: delivered, exit 0, and each file's name, hash and size."""
    r = released
    assert r.rc == 0, r.answer
    assert r.answer["state"] == "delivered" and r.answer["code"] is None
    assert r.answer["recipient"] == RECIPIENT
    assert r.answer["policy_sha256"] == eg.DEFAULT_POLICY.sha256()
    assert r.answer["release_id"] == eg.release_id(
        r.tenant, RECIPIENT, eg.DEFAULT_POLICY.sha256(), [r.sha256]
    )
    [file] = r.answer["files"]
    assert set(file) == {"name", "sha256", "bytes"}
    data = r.pdf.read_bytes()
    assert hashlib.sha256(data).hexdigest() == file["sha256"] and len(data) == file["bytes"]


async def test_egress_cli_release_again_joins_the_delivered_release(released: Released) -> None:
    """The same request again answers the same release and the recipient keeps one copy."""
    r = released
    rc, again = await custody_cli(
        r.settings, "release", r.sha256, "--to", RECIPIENT, "--wait", tenant=r.tenant
    )
    assert rc == 0 and again["release_id"] == r.release_id
    assert again["state"] == "delivered" and again["files"] == r.answer["files"]
    assert len(_outbox_files(r.outbox)) == 2  # the PDF and the manifest, once


async def test_egress_cli_release_of_an_unknown_document_is_refused(
    temporal_client: Client, released: Released, ocr_engine: OcrEngine
) -> None:
    """The workflow refuses a document that was never published here: exit 3 with its code."""
    r = released
    async with running_pipeline(temporal_client, r.settings, ocr_engine, with_ocr_worker=False):
        rc, unknown = await custody_cli(
            r.settings, "release", "ab" * 32, "--to", RECIPIENT, "--wait", tenant=r.tenant
        )
    assert rc == 3 and unknown["state"] == "refused" and unknown["code"] == "DOCUMENT_UNKNOWN"
    assert unknown["release_id"] and unknown["files"] == []


def test_egress_cli_release_to_an_unknown_recipient_starts_nothing(released: Released) -> None:
    """A recipient nobody registered is refused before any workflow: no release id, exit 3."""
    r = released
    rc, nobody = cli(r.settings, "release", r.sha256, "--to", "nobody", tenant=r.tenant)
    assert rc == 3 and nobody["state"] == "refused" and nobody["code"] == "RECIPIENT_UNKNOWN"
    assert nobody["release_id"] is None and nobody["files"] == []


def test_egress_cli_recipients_add_ls_revoke(released: Released, tmp_path: Path) -> None:
    """Recipients: channels checked at registration, create-only, revoked once, by tenant."""
    s, tenant = released.settings, "cli-recipients-" + os.urandom(3).hex()
    rc, added = cli(
        s, "recipients", "add", "lab", "--https", "http://127.0.0.1:1/in", tenant=tenant
    )
    assert rc == 0 and added["kind"] == "https" and added["created"] is True
    assert "@" in added["created_by"]  # the operator as user@host
    rc, bad = cli(s, "recipients", "add", "lab2", "--https", "http://example.com/", tenant=tenant)
    assert rc == 2 and bad["error"] == "CHANNEL_INVALID"
    rc, taken = cli(s, "recipients", "add", "lab", "--outbox", str(tmp_path), tenant=tenant)
    assert rc == 2 and taken["error"] == "USAGE"
    rc, revoked = cli(s, "recipients", "revoke", "lab", tenant=tenant)
    assert rc == 0 and revoked == {"name": "lab", "revoked": True, "already_revoked": False}
    rc, rows = cli(s, "recipients", "ls", tenant=tenant)
    assert rc == 0 and [(x["name"], x["revoked"]) for x in rows] == [("lab", True)]
    rc, missing = cli(s, "recipients", "revoke", "ghost", tenant=tenant)
    assert rc == 5 and missing["error"] == "RECIPIENT_UNKNOWN"


async def test_egress_cli_policies_add_show_ls(released: Released, tmp_path: Path) -> None:
    """Policies: the same body is the same version, a new body the next, built-ins refused."""
    s, tenant = released.settings, "cli-policies-" + os.urandom(3).hex()
    body = tmp_path / "p.json"
    body.write_text(json.dumps({"include": ["text"], "c2pa": False}))
    rc, v1 = await custody_cli(
        s, "policies", "add", "text-only", "--file", str(body), tenant=tenant
    )
    rc_again, same = cli(s, "policies", "add", "text-only", "--file", str(body), tenant=tenant)
    body.write_text(json.dumps({"include": ["text", "searchable_pdf"]}))
    _, v2 = cli(s, "policies", "add", "text-only", "--file", str(body), tenant=tenant)
    rc_show, shown = cli(s, "policies", "show", "text-only", tenant=tenant)
    rc_builtin, builtin = cli(s, "policies", "add", "default", "--file", str(body), tenant=tenant)
    expected = eg.Policy(name="text-only", include=("searchable_pdf", "text"))
    assert rc == rc_again == rc_show == 0
    assert v1["version"] == same["version"] == 1 and v1["sha256"] == same["sha256"]
    assert v2["version"] == 2 and v2["sha256"] == expected.sha256()
    assert shown["version"] == 2 and shown["sha256"] == expected.sha256()
    assert rc_builtin == 2 and builtin["error"] == "POLICY_INVALID"
    _, rows = cli(s, "policies", "ls", tenant=tenant)
    assert {(x["name"], x["version"]) for x in rows} >= {("text-only", 1), ("text-only", 2)}


async def test_egress_cli_ls_answers_who_got_what(released: Released) -> None:
    """``egress ls`` lists the release's event from the store, and its filters narrow it."""
    r = released
    rc, rows = await custody_cli(
        r.settings, "egress", "ls", "--recipient", RECIPIENT, tenant=r.tenant
    )
    assert rc == 0 and len(rows) == 1
    row = rows[0]
    assert {"kind", "release_id", "recipient", "actor", "policy_sha256", "bytes_sha256"} <= set(row)
    assert row["kind"] == "release" and row["release_id"] == r.release_id
    assert row["documents"] == [r.sha256] and row["at"]
    files = [eg.FileRef(**f, media_type="application/pdf") for f in r.answer["files"]]
    assert row["bytes_sha256"] == eg.packet_sha256(files)
    assert "@" in row["actor"] and row["policy_sha256"] == eg.DEFAULT_POLICY.sha256()
    _, by_doc = cli(r.settings, "egress", "ls", "--document", "cd" * 32, tenant=r.tenant)
    _, later = cli(r.settings, "egress", "ls", "--since", "2999-01-01", tenant=r.tenant)
    _, other = cli(r.settings, "egress", "ls", "--policy", "read", tenant=r.tenant)
    assert by_doc == later == other == []


def test_egress_cli_ls_lists_each_delivered_file(released: Released) -> None:
    """``egress ls --json`` names each file the recipient holds (name, hash, size) beside
    ``bytes_sha256``, which an auditor recomputes from that list (docs/compliance.md)."""
    r = released
    _, rows = cli(r.settings, "egress", "ls", "--recipient", RECIPIENT, tenant=r.tenant)
    (row,) = rows
    held = {p.name: p.read_bytes() for p in (r.outbox / r.release_id).iterdir()}
    assert [f["name"] for f in row["files"]] == [f["name"] for f in r.answer["files"]]
    for f in row["files"]:
        data = held[f["name"]]
        assert (f["sha256"], f["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data))
    assert (
        hashlib.sha256(canonical_json({"files": row["files"]})).hexdigest() == row["bytes_sha256"]
    )


@contextmanager
def _tampered(store: LocalStore, key: str, change: str) -> Iterator[None]:
    """Change one stored object (flip a byte, rewrite, or delete it); put it back after."""
    original = store.get(key)
    if change == "delete":
        store.delete(key)
    else:
        data = bytearray(original)
        at = len(data) // 2 if change == "flip" else original.index(b'"signed_at":"') + 15
        data[at] = data[at] ^ 1 if change == "flip" else ord("9" if data[at] != ord("9") else "8")
        store.put(key, bytes(data))
    try:
        yield
    finally:
        store.put(key, original)


async def test_egress_cli_verify_passes_then_exits_8_on_a_flipped_byte(released: Released) -> None:
    """``egress verify`` passes every named check, and exits 8 when a released file changed."""
    r = released
    rc, ok = await custody_cli(r.settings, "egress", "verify", r.release_id, tenant=r.tenant)
    assert rc == 0 and ok["ok"] is True and ok["failed"] == 0
    names = {c["name"] for c in ok["reports"][0]["checks"]}
    assert names == {
        "receipt.present",
        "receipt.canonical",
        "receipt.signature",
        "files.hash",
        "packet.hash",
        "egress.event",
        "receipt.event",
        "egress.before_receipt",
        "policy.pinned",
        "ledger.inclusion",
        "ledger.witness",
        "manifest.hash",
    }
    key = eg.release_file_key(r.tenant, r.release_id, r.answer["files"][0]["name"])
    with _tampered(r.store, key, "flip"):
        rc, bad = await custody_cli(r.settings, "egress", "verify", r.release_id, tenant=r.tenant)
    failed = {c["name"] for c in bad["reports"][0]["checks"] if not c["ok"]}
    # The flipped byte is in the page content, which the C2PA manifest's data hash covers.
    assert rc == 8 and failed == {"files.hash", "manifest.hash"}


@pytest.mark.parametrize(
    ("target", "change", "checks"),
    [
        ("receipt", "rewrite", {"receipt.signature", "receipt.event"}),
        (
            "event",
            "delete",
            {  # the bundle holding both events gone: neither is in the log
                "egress.event",
                "receipt.event",
                "egress.before_receipt",
                "ledger.inclusion",
            },
        ),
    ],
)
async def test_egress_verify_names_the_check_that_fails(
    released: Released, target: str, change: str, checks: set[str]
) -> None:
    """A rewritten receipt or a deleted egress event FAILs exactly the checks that name it."""
    r = released
    key = {
        "receipt": eg.receipt_key(r.tenant, r.release_id),
        "event": bundle_key(f"ledger/{r.tenant}/", 0, Ledger(r.store, r.tenant).size()),
    }[target]
    with _tampered(r.store, key, change):
        report = verify_release(r.store, public_keys(r.store), r.tenant, r.release_id)
    assert {c.name for c in report.checks if not c.ok} == checks
    after = verify_release(r.store, public_keys(r.store), r.tenant, r.release_id)
    assert after.ok  # every byte was put back


def _page_png(pdf: bytes) -> bytes:
    """Page 1 as a PNG at 200 dpi: a copy that kept only the pixels, as a scan would."""
    doc = pdfium.PdfDocument(pdf)
    try:
        image: Image.Image = doc[0].render(scale=200 / 72).to_pil()
    finally:
        doc.close()
    out = io.BytesIO()
    image.convert("L").save(out, format="PNG")
    return out.getvalue()


def _resaved(pdf: bytes) -> bytes:
    """The PDF rewritten by another tool: the C2PA manifest no longer verifies, XMP stays."""
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        out = io.BytesIO()
        doc.save(out)
    return out.getvalue()


async def test_egress_cli_identify_exact_copy_by_hash(released: Released) -> None:
    """The delivered file itself is an exact match, found by its hash, for its tenant only:
    another tenant asking is told nothing."""
    r = released
    rc, found = await custody_cli(r.settings, "egress", "identify", str(r.pdf), tenant=r.tenant)
    assert rc == 0
    assert {k: found[k] for k in ("release_id", "recipient", "match", "by")} == {
        "release_id": r.release_id,
        "recipient": RECIPIENT,
        "match": "exact",
        "by": "hash",
    }
    assert (found["scope"], found["file"]) == (r.tenant, "searchable_pdf")
    _, other = cli(r.settings, "egress", "identify", str(r.pdf), tenant="someone-else")
    _, untenanted = cli(r.settings, "egress", "identify", str(r.pdf))
    assert other["match"] == untenanted["match"] == "none"
    assert other["release_id"] is None and other["recipient"] is None


async def test_egress_identify_text_file_is_the_documents_text_not_a_release(
    released: Released, temporal_client: Client, ocr_engine: OcrEngine
) -> None:
    """A released text file's bytes are the document's text, the same in every release of
    it: ``text``, naming the releases that carried it, never one release's exact copy."""
    r = released
    add_policy(r.store, r.tenant, eg.Policy(name="with-text", include=("searchable_pdf", "text")))
    async with running_pipeline(
        temporal_client, r.settings, ocr_engine, with_ocr_worker=False
    ) as custody:
        started = await release(
            custody, [r.sha256], to=RECIPIENT, policy="with-text", tenant=r.tenant, actor="op"
        )
        done = await wait_release(custody, started.release_id)
    text = next(f for f in done.files if f.name.endswith(".txt"))
    data = (r.outbox / done.release_id / text.name).read_bytes()
    found = identify(r.store, data, trust_anchor(r.settings), r.tenant)
    assert (found.match, found.by, found.file, found.release_id) == ("text", "hash", "text", None)
    assert found.releases == (done.release_id,)
    assert identify(r.store, data, trust_anchor(r.settings), "someone-else").match == "none"


@pytest.mark.parametrize(
    ("copy", "by", "via"),
    [
        ("appended", "c2pa", "c2pa"),
        ("resaved", "watermark", "xmp"),
        ("scanned", "watermark", "visible"),
        ("unrelated", None, None),
    ],
)
def test_egress_identify_altered_copies(
    released: Released, copy: str, by: str | None, via: str | None
) -> None:
    """Changed copies are ``altered`` (by manifest, XMP or printed mark); others are ``none``."""
    r = released
    pdf = r.pdf.read_bytes()
    data = {
        "appended": lambda: pdf + b"\n% a note someone added\n",
        "resaved": lambda: _resaved(pdf),
        "scanned": lambda: _page_png(pdf),
        "unrelated": lambda: _page_png(pdf)[:64] + os.urandom(64),
    }[copy]()
    found = identify(r.store, data, trust_anchor(r.settings), r.tenant)
    assert (found.by, found.via) == (by, via)
    if by is None:
        assert (found.release_id, found.recipient, found.match) == (None, None, "none")
    else:
        assert (found.release_id, found.recipient, found.match) == (
            r.release_id,
            RECIPIENT,
            "altered",
        )


async def test_egress_verify_a_rogue_key_in_the_store_proves_nothing(
    released: Released, tmp_path: Path
) -> None:
    """A receipt re-signed by a key published into the store: ``egress verify`` trusts only
    pinned keys (the local keyring here), so its signature FAILs, naming the key."""
    r = released
    rogue = rotate(tmp_path / "rogue")
    rogue.publish(r.store)
    key = eg.receipt_key(r.tenant, r.release_id)
    original = r.store.get(key)
    forged = SignedReceipt.sign(SignedReceipt.model_validate_json(original).receipt, rogue)
    r.store.put(key, forged.canonical())
    try:
        rc, out = cli(r.settings, "egress", "verify", r.release_id, tenant=r.tenant)
    finally:
        r.store.put(key, original)
    failed = {c["name"]: c["detail"] for c in out["reports"][0]["checks"] if not c["ok"]}
    assert rc == 8 and rogue.kid in failed["receipt.signature"], out
