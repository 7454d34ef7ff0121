#!/usr/bin/env python3
"""Verify a Custody evidence bundle with nothing but Python and ``cryptography``.

Usage: python verify_bundle.py BUNDLE_DIR   (the unzipped bundle)

This file is copied into every bundle and imports nothing from Custody, so an
auditor can check a document without Custody's servers. It checks:

1. sha256(source.bin) equals the record's ``sha256`` (the bytes that were OCR'd);
2. the Ed25519 signature in record.json over the canonical JSON of the record,
   with the public key in public_key.json whose ``kid`` the signature names;
3. sha256(text.txt) and sha256(pages.json) equal the record's checksums, and
   so does sha256(searchable.pdf) when the record has one (``searchable``
   "built"; "original" means source.bin itself is the searchable PDF);
4. every ledger event's hash over its canonical JSON, and that each follows the
   one before it; the packet event the record names is there with that hash;
   the ``published`` event names sha256(record.json);
5. each signed release receipt in receipts/: its Ed25519 signature over the
   canonical JSON of ``receipt``, with the key in keys/ whose ``kid`` it names
   (receipts may be signed by a newer key than the record), and that the
   record's ``sha256`` is among the receipt's ``sources``.

Canonical JSON: keys sorted, separators "," and ":", UTF-8, no ASCII escaping.
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_signature(envelope: dict, key: dict, signed: str = "record") -> bool:  # type: ignore[type-arg]
    """Whether the envelope's signature is ``key``'s over the canonical JSON of its ``signed``."""
    sig = envelope["signature"]
    if sig["kid"] != key["kid"] or sig["alg"] != "Ed25519":
        return False
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key["public_key"]))
    try:
        public.verify(base64.b64decode(sig["sig"]), canonical(envelope[signed]))
    except InvalidSignature:
        return False
    return True


def check_receipts(folder: Path, sha256: str) -> dict[str, bool]:
    """Two named checks per release receipt: its signature, and that it names this document."""
    keys = {}
    for path in sorted((folder / "keys").glob("*.json")):
        key = json.loads(path.read_text())
        keys[key["kid"]] = key
    checks = {}
    for path in sorted((folder / "receipts").glob("*.json")):
        rid = path.stem
        try:
            envelope = json.loads(path.read_bytes())
        except ValueError:
            envelope = {}
        checks[f"receipt.signature:{rid}"] = _receipt_signed(envelope, keys)
        checks[f"receipt.sources:{rid}"] = _receipt_names(envelope, rid, sha256)
    return checks


def _receipt_signed(envelope: dict, keys: dict) -> bool:  # type: ignore[type-arg]
    try:
        return check_signature(envelope, keys[envelope["signature"]["kid"]], "receipt")
    except (ValueError, KeyError, TypeError):  # malformed, or signed by a key not in keys/
        return False


def _receipt_names(envelope: dict, rid: str, sha256: str) -> bool:  # type: ignore[type-arg]
    try:
        receipt = envelope["receipt"]
        return bool(receipt["release_id"] == rid and sha256 in receipt["sources"])
    except (KeyError, TypeError):
        return False


def check_events(events: list[dict], record: dict, record_bytes: bytes) -> list[str]:  # type: ignore[type-arg]
    problems = []
    for before, event in zip([None, *events], events, strict=False):
        body = {k: v for k, v in event.items() if k != "hash"}
        if sha(canonical(body)) != event["hash"]:
            problems.append(f"ledger event {event['seq']} altered")
        if before is not None and (
            event["seq"] != before["seq"] + 1 or event["prev"] != before["hash"]
        ):
            problems.append(f"ledger event {event['seq']} does not follow {before['seq']}")
    packet = record.get("packet_event")
    if packet and not any(
        e["seq"] == packet["seq"] and e["hash"] == packet["hash"] for e in events
    ):
        problems.append("packet event missing or changed")
    published = [
        e for e in events if e["kind"] == "published" and e.get("sha256") == record["sha256"]
    ]
    if not any(e["detail"].get("record_sha256") == sha(record_bytes) for e in published):
        problems.append("no published event for this record")
    return problems


def main(folder: Path) -> int:
    record_bytes = (folder / "record.json").read_bytes()
    envelope = json.loads(record_bytes)
    record = envelope["record"]
    key = json.loads((folder / "public_key.json").read_text())
    events = [json.loads(p.read_text()) for p in sorted((folder / "ledger").glob("*.json"))]
    checks = {
        "source.hash": sha((folder / "source.bin").read_bytes()) == record["sha256"],
        "record.signature": check_signature(envelope, key),
        "text.checksum": sha((folder / "text.txt").read_bytes()) == record["text_sha256"],
        "pages.checksum": sha((folder / "pages.json").read_bytes()) == record["pages_sha256"],
    }
    searchable = record.get("searchable", "none")
    if searchable == "built":
        pdf = folder / "searchable.pdf"
        checks["pdf.checksum"] = pdf.is_file() and sha(pdf.read_bytes()) == record["pdf_sha256"]
    elif searchable == "original":
        checks["pdf.checksum"] = record["pdf_sha256"] == record["sha256"]
    checks.update(check_receipts(folder, record["sha256"]))
    problems = check_events(events, record, record_bytes)
    checks["ledger.chain"] = not problems
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    for problem in problems:
        print(f"      {problem}")
    verdict = all(checks.values())
    print("PASS" if verdict else "FAIL")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
