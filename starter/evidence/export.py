"""Evidence bundles: a zip an auditor verifies offline with verify_bundle.py alone.

A bundle carries the document's objects, its signed record, its own ledger
events and those of its releases (egress and receipt events, the receipt when
it left alone), each with an RFC 9162 inclusion proof in a signed checkpoint
of its tenant's log that covers them all (made on export when needed). It
verifies without any other document's hashes, ids or sizes, only against keys
the auditor pins (``verify_bundle.py --trust FPR``), and says what it leaves out.
"""

from __future__ import annotations

import io
import json
import zipfile
from importlib import resources
from pathlib import Path

from custody import ids
from custody.canonical import canonical_json
from custody.egress import EgressKind
from custody.errors import ConfigurationError
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.models import SignedRecord
from custody.state.egress import SignedReceipt, hand_out
from custody.stores import ObjectStore
from starter.evidence.bundle_events import select


def export_bundle(
    store: ObjectStore, sha256: str, tenant: str | None, out: Path, *, actor: str
) -> Path:
    """A zip an auditor can check with verify_bundle.py alone (see VERIFY.md inside).

    It carries the document's own events and those of its releases, each with
    its inclusion proof in the checkpoint it is sealed to: no other document's
    hash, id or size (starter.evidence.bundle_events).
    """
    record_bytes = store.get(ids.record_key(sha256, tenant))
    signed = SignedRecord.model_validate_json(record_bytes)
    record = signed.record
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("source.bin", store.get(record.source_key))
        z.writestr("text.txt", store.get(record.text_key))
        z.writestr("pages.json", store.get(record.pages_key))
        if record.searchable == "built" and record.pdf_key:
            z.writestr("searchable.pdf", store.get(record.pdf_key))
        if record.fields_key:  # the fields read, their hash in the record
            z.writestr("fields.json", store.get(record.fields_key))
        z.writestr("record.json", record_bytes)
        z.writestr("packet.json", store.get(ids.packet_key(sha256, tenant)))
        keys = public_keys(store)
        z.writestr("public_key.json", canonical_json(keys[signed.signature.kid]))
        kids = {signed.signature.kid, *_add_ledger(z, store, Ledger(store, tenant), sha256)}
        for kid in sorted(kids & keys.keys()):  # receipts and checkpoints may use newer keys
            z.writestr(f"keys/{kid}.json", canonical_json(keys[kid]))
        z.writestr("verify_bundle.py", _verifier_source())
        z.writestr("VERIFY.md", _VERIFY_MD.format(sha256=sha256))
    # The bundle carries the source and its text: it leaves only once the egress event is in.
    out.write_bytes(
        hand_out(store, tenant, EgressKind.EXPORT, buf.getvalue(), actor=actor, documents=[sha256])
    )
    return out


def _add_ledger(z: zipfile.ZipFile, store: ObjectStore, ledger: Ledger, sha256: str) -> set[str]:
    """The bundle's events (starter.evidence.bundle_events), the checkpoint they are sealed
    to, each event's inclusion proof in it, and the receipts it carries.

    Returns the key IDs that signed the checkpoint and the receipts. The
    checkpoint is made now when the exporter holds the signing key and the
    newest one does not cover every event; what it still does not cover, and
    what is left out for privacy, is named in ``proofs.json``'s ``left_out``.
    """
    chosen = select(store, ledger, sha256)
    if ledger.checkpoint_size() < max(chosen.events, default=0) and ledger.notary is not None:
        ledger.seal(max(chosen.events))
    note = _newest_note(ledger)
    size = int(note.split("\n")[1]) if note else 0
    mine = sorted(seq for seq in chosen.events if seq <= size)
    if not any(chosen.events[seq].sha256 == sha256 for seq in mine):
        raise ConfigurationError(
            detail=f"no signed checkpoint covers {sha256[:12]}'s events yet (custody audit seal)"
        )
    tree = ledger.tree(size)
    for seq in mine:
        z.writestr(f"ledger/{seq:012d}.json", ledger.entry(seq))
    late = [{"seq": s, "why": "after the checkpoint"} for s in sorted(chosen.events) if s > size]
    body = {
        "size": size,
        "proofs": {str(s): [h.hex() for h in tree.inclusion(s - 1)] for s in mine},
        "salts": {str(s): salt for s, salt in sorted(chosen.salts.items()) if s <= size},
        "left_out": late + chosen.left_out,
    }
    z.writestr("ledger/checkpoint.note", note)
    z.writestr("ledger/proofs.json", canonical_json(body))
    kids = {str(note.rpartition("custody-signing/")[2].partition(" ")[0])}
    for rid, receipt in sorted(chosen.receipts.items()):
        z.writestr(f"receipts/{rid}.json", receipt)
        kids.add(SignedReceipt.model_validate_json(receipt).signature.kid)
    return kids


def _newest_note(ledger: Ledger) -> str:
    """The newest checkpoint's note ("" before the first), from before tiles by its size."""
    newest = ledger.newest_checkpoint()
    if newest is not None:
        return newest.decode()
    sizes = ledger.checkpoint_sizes()
    return str(json.loads(ledger.stored_checkpoint(max(sizes)))["note"]) if sizes else ""


def _verifier_source() -> str:
    return resources.files("starter.evidence").joinpath("verify_bundle.py").read_text()


_VERIFY_MD = """# Verifying this evidence bundle

Document SHA-256: `{sha256}`. Needs Python 3 and the `cryptography` package; nothing
from Custody. Ask Custody's operator, out of band, for the SHA-256 fingerprint of each
signing key (`custody evidence keys`), then:

    unzip bundle.zip -d bundle
    python bundle/verify_bundle.py --trust FPR [--trust FPR2 ...] bundle

It prints PASS or FAIL for each check and exits 0 only if all pass. Keys shipped in
the bundle (public_key.json, keys/) are only where a pinned key is found: a key whose
fingerprint was not given with --trust verifies nothing.

- `trust.pinned`: at least one key in the bundle has a pinned fingerprint.
- `source.hash`: sha256(source.bin) is the record's `sha256`: these are the bytes that were OCR'd.
- `record.canonical`: record.json is exactly RFC 8785 canonical JSON (no spaces, sorted
  members, ECMAScript numbers, no member twice).
- `record.signature`: record.json's Ed25519 signature, by a pinned key, over the bytes of
  its `record` member exactly as stored (never re-serialised).
- `text.checksum`, `pages.checksum`: sha256(text.txt), sha256(pages.json) match the record.
- `pdf.checksum` (records with a searchable PDF): sha256(searchable.pdf) matches the record's
  `pdf_sha256`; for a born-digital PDF (`searchable` "original") `pdf_sha256` equals `sha256`.
- `ledger.events`: the files in ledger/ are this document's own ledger events, or events of
  its releases: an egress event of several documents commits to each by
  sha256(salt || document sha256), and ledger/proofs.json `salts` gives this document's salt
  alone; a release's `egress.receipt` event names a release whose egress event is here.
  Each `hash` is sha256 of its canonical JSON without `hash`, the record's `packet_event` is
  among them, and a `published` event names sha256(record.json).
- `ledger.checkpoint`: ledger/checkpoint.note is a C2SP signed note (origin
  `custody.ledger/<tenant or _>`, tree size, base64 root hash) signed by a pinned key.
- `ledger.inclusion`: each event file, as stored, is leaf `seq - 1` of that Merkle tree
  (RFC 9162: leaf SHA-256(0x00 || bytes), node SHA-256(0x01 || left || right)), by the
  inclusion proof in ledger/proofs.json.
- `receipt.canonical:<release id>`, `receipt.signature:<release id>`,
  `receipt.sources:<release id>`: each receipt in receipts/ is canonical, signed as stored
  by a pinned key (as the record is) and names this document among its `sources`;
  `receipt.logged:<release id>`: its egress event (seq and hash) and a receipt event naming
  sha256 of the receipt's bytes are among the proven events, so it is tied to the log.

ledger/proofs.json `left_out` names what the bundle does not carry, and why: events after
the checkpoint it is sealed to, egress events written before salted commitments (they name
the other documents), receipts of several documents (they name them all, with sizes).
"""
