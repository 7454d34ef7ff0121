#!/usr/bin/env python3
"""Verify a Custody evidence bundle with nothing but Python and ``cryptography``.

Usage: python verify_bundle.py --trust FPR [--trust FPR ...] BUNDLE_DIR

``FPR`` is the SHA-256 of a signing key's raw 32-byte public key (64 hex
characters), obtained from Custody's operator out of band. Only pinned keys are
trusted: the keys shipped in the bundle are where a pinned key is found, never
a reason to trust one. This file imports nothing from Custody. It checks:

1. ``source.hash``: sha256(source.bin) is the record's ``sha256``;
2. ``record.canonical``: record.json is exactly RFC 8785 canonical JSON (no
   spaces, sorted members, ECMAScript numbers, no member twice);
   ``record.signature``: a pinned key's Ed25519 signature over the ``record``
   member's bytes exactly as stored (never re-serialised), in an envelope of
   that member and its signature alone;
3. ``text.checksum``, ``pages.checksum``, ``pdf.checksum``: the record's checksums
   (``searchable`` "original" means source.bin itself is the searchable PDF);
4. ``ledger.events``: each event in ledger/ hashes to its ``hash``, is this
   document's or one of its releases' (an egress event committing to it by
   sha256(salt || sha256), with its salt in ledger/proofs.json; the receipt
   event of such a release), the record's packet event is among them, and a
   ``published`` event names sha256(record.json);
5. ``ledger.checkpoint``: ledger/checkpoint.note is a C2SP signed note of this
   tenant's log, signed by a pinned key;
6. ``ledger.inclusion``: each event file is leaf seq-1 of that tree, by the RFC
   9162 inclusion proof in ledger/proofs.json: the events are in the signed log,
   with no other document's events needed;
7. ``receipt.canonical:<id>``, ``receipt.signature:<id>``, ``receipt.sources:<id>``,
   ``receipt.logged:<id>``: each release receipt is canonical, signed as stored
   by a pinned key (as the record is), names this document, and its egress and
   receipt events are among the proven ones.

What the bundle leaves out (ledger/proofs.json ``left_out``) is printed, with why.

Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def canonical(value: object) -> bytes:
    """RFC 8785: members sorted by UTF-16 code units, no spaces, ECMAScript numbers."""
    return "".join(_jcs(value)).encode()


def _jcs(v: object) -> list[str]:
    if v is None or isinstance(v, bool | str):
        return [json.dumps(v, ensure_ascii=False)]
    if isinstance(v, int) and abs(v) <= 2**53:  # beyond, no double holds it exactly
        return [str(v)]
    if isinstance(v, float):
        return [_number(v)]
    if isinstance(v, list):
        return ["[", ",".join("".join(_jcs(x)) for x in v), "]"]
    if isinstance(v, dict):
        names = sorted(v, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        inner = ",".join(
            json.dumps(k, ensure_ascii=False) + ":" + "".join(_jcs(v[k])) for k in names
        )
        return ["{", inner, "}"]
    raise ValueError(f"{type(v).__name__} is not JSON")


def _number(x: float) -> str:
    """An IEEE 754 double as ECMAScript's Number.prototype.toString prints it."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("NaN and Infinity are not JSON")
    if x == 0:
        return "0"
    sign, digits, exp = Decimal(repr(x)).normalize().as_tuple()
    s = "".join(map(str, digits))
    k, n = len(s), int(exp) + len(s)  # x = 0.s * 10**n
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{s[:n]}.{s[n:]}"
    elif -6 < n <= 0:
        text = f"0.{'0' * -n}{s}"
    else:
        mantissa = s if k == 1 else f"{s[0]}.{s[1:]}"
        text = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return f"-{text}" if sign else text


def strict(raw: bytes) -> Any:
    """JSON with no member name twice (``canonical`` refuses NaN and Infinity)."""
    return json.loads(raw, object_pairs_hook=_unique)


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    if len({name for name, _ in pairs}) != len(pairs):
        raise ValueError("a member name twice")
    return dict(pairs)


def is_canonical(raw: bytes) -> bool:
    """Whether ``raw`` is exactly the canonical JSON of what it parses to, as Custody writes."""
    try:
        return canonical(strict(raw)) == raw
    except ValueError:  # unparsable, a name twice, NaN, a lone surrogate
        return False


def member(raw: bytes, name: str) -> bytes | None:
    """Member ``name``'s bytes exactly as stored: Custody writes it first, so it is cut out."""
    head = f'{{"{name}":'
    try:
        text = raw.decode()
        if not text.startswith(head):
            return None
        _, end = json.JSONDecoder().raw_decode(text, len(head))
    except ValueError:  # not UTF-8, or the member does not parse
        return None
    return text[len(head) : end].encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pinned_keys(folder: Path, pins: set[str]) -> dict[str, Ed25519PublicKey]:
    """The bundle's keys whose fingerprint is pinned, by key ID; the rest are ignored."""
    found = {}
    for path in [folder / "public_key.json", *sorted((folder / "keys").glob("*.json"))]:
        try:
            record = json.loads(path.read_bytes())
            raw = base64.b64decode(record["public_key"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if sha(raw) in pins and sha(raw)[:16] == record.get("kid"):
            found[record["kid"]] = Ed25519PublicKey.from_public_bytes(raw)
    return found


def signed_by(raw: bytes, keys: dict, field: str) -> bool:  # type: ignore[type-arg]
    """Whether the stored bytes of member ``field`` carry a pinned key's Ed25519 signature.

    The signed bytes are cut from ``raw``, never re-serialised: a space, another
    member order or number form, a name twice or an extra member breaks the
    signature as it would a hash. The envelope holds that member and its signature only.
    """
    body = member(raw, field)
    try:
        envelope = strict(raw)
        sig = envelope["signature"]
        if body is None or set(envelope) != {field, "signature"}:
            return False
        keys[sig["kid"]].verify(base64.b64decode(sig["sig"]), body)
    except (KeyError, TypeError, ValueError, InvalidSignature):  # ValueError: a name twice
        return False
    return bool(set(sig) <= {"alg", "kid", "sig"} and sig.get("alg", "Ed25519") == "Ed25519")


def check_receipts(folder: Path, sha256: str, keys: dict) -> dict[str, bool]:  # type: ignore[type-arg]
    checks = {}
    events = [json.loads(p.read_bytes()) for p in (folder / "ledger").glob("[0-9]*.json")]
    for path in sorted((folder / "receipts").glob("*.json")):
        rid = path.stem
        raw = path.read_bytes()
        try:
            receipt = json.loads(raw)["receipt"]
            names = receipt["release_id"] == rid and sha256 in receipt["sources"]
        except (ValueError, KeyError, TypeError):
            receipt, names = {}, False
        checks[f"receipt.canonical:{rid}"] = is_canonical(raw)
        checks[f"receipt.signature:{rid}"] = signed_by(raw, keys, "receipt")
        checks[f"receipt.sources:{rid}"] = bool(names)
        checks[f"receipt.logged:{rid}"] = logged(receipt, sha(raw), events)
    return checks


def logged(receipt: dict, receipt_sha256: str, events: list) -> bool:  # type: ignore[type-arg]
    """The receipt's egress event and a receipt event naming its bytes are in the bundle
    (whose events ledger.inclusion proves in the signed log)."""
    egress = any(
        e.get("seq") == receipt.get("egress_event_seq")
        and e.get("hash") == receipt.get("egress_event_hash")
        for e in events
    )
    named = any(
        e.get("kind") == "egress.receipt"
        and e.get("detail", {}).get("receipt_sha256") == receipt_sha256
        for e in events
    )
    return egress and named


def leaf(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def included(index: int, size: int, entry: bytes, proof: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2: ``entry`` is leaf ``index`` of the tree ``root`` of ``size``."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf(entry)
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def open_note(signed: bytes, keys: dict[str, Ed25519PublicKey]) -> tuple[str, int, bytes] | None:
    """A C2SP signed note (origin, size, root) if a pinned key signed it; else None."""
    try:
        body, _, sigs = signed.decode().partition("\n\n")
        origin, size, root = body.split("\n")
        text, head = (body + "\n").encode(), base64.b64decode(root, validate=True)
    except (UnicodeDecodeError, ValueError):
        return None
    for line in sigs.splitlines():
        dash, name, blob = (line.split(" ") + ["", "", ""])[:3]
        key = keys.get(name.removeprefix("custody-signing/"))
        if dash != "\u2014" or not name.startswith("custody-signing/") or key is None:
            continue
        want = hashlib.sha256(name.encode() + b"\n\x01" + key.public_bytes_raw()).digest()[:4]
        try:
            raw = base64.b64decode(blob, validate=True)
            if raw[:4] == want:
                key.verify(raw[4:], text)
                return origin, int(size), head
        except (InvalidSignature, ValueError):
            continue
    return None


def salted(salt: str, sha256: str) -> str:
    return sha(f"{salt}{sha256}".encode())


def belongs(seq: int, event: dict, doc: str, salts: dict, releases: set) -> bool:  # type: ignore[type-arg]
    """The document's own event, or one of its releases': an egress event committing to it
    by its salted hash, or a receipt event of such a release."""
    if event.get("sha256") == doc:
        return True
    detail = event.get("detail") or {}
    if event.get("kind") == "egress" and str(seq) in salts:
        return salted(salts[str(seq)], doc) in (detail.get("documents_salted") or [])
    return event.get("kind") == "egress.receipt" and detail.get("release_id") in releases


def check_ledger(folder: Path, record: dict, record_bytes: bytes, keys: dict) -> dict[str, bool]:  # type: ignore[type-arg]
    """The document's events and its releases', each proven to be in the log a pinned key signed."""
    files = sorted((folder / "ledger").glob("[0-9]*.json"))
    entries = {int(p.stem): p.read_bytes() for p in files}
    events = {seq: json.loads(data) for seq, data in entries.items()}
    proofs = json.loads((folder / "ledger" / "proofs.json").read_bytes())
    salts = proofs.get("salts", {})
    releases = {
        e["detail"].get("release_id")
        for e in events.values()
        if e.get("kind") == "egress" and e.get("detail", {}).get("release_id")
    }
    ok_events = bool(events) and all(
        e["seq"] == seq
        and belongs(seq, e, record["sha256"], salts, releases)
        and sha(canonical({k: v for k, v in e.items() if k != "hash"})) == e["hash"]
        for seq, e in events.items()
    )
    packet = record.get("packet_event")
    if packet and events.get(packet["seq"], {}).get("hash") != packet["hash"]:
        ok_events = False
    published = [e for e in events.values() if e["kind"] == "published"]
    ok_events &= any(e["detail"].get("record_sha256") == sha(record_bytes) for e in published)
    scope = record.get("tenant") or "_"
    note = open_note((folder / "ledger" / "checkpoint.note").read_bytes(), keys)
    ok_note = note is not None and note[0] == f"custody.ledger/{scope}"
    ok_incl = ok_note and note is not None and proofs["size"] == note[1] and bool(entries)
    for seq, data in entries.items():
        path = [bytes.fromhex(h) for h in proofs["proofs"].get(str(seq), [])]
        ok_incl = ok_incl and note is not None and included(seq - 1, note[1], data, path, note[2])
    return {"ledger.events": ok_events, "ledger.checkpoint": ok_note, "ledger.inclusion": ok_incl}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="verify a Custody evidence bundle offline")
    parser.add_argument("folder", type=Path, help="the unzipped bundle")
    parser.add_argument("--trust", action="append", default=[], metavar="FPR")
    args = parser.parse_args(argv)
    folder: Path = args.folder
    pins = {t.strip().lower().removeprefix("sha256:") for t in args.trust}
    keys = pinned_keys(folder, pins)
    record_bytes = (folder / "record.json").read_bytes()
    envelope = json.loads(record_bytes)
    record = envelope["record"]
    checks = {
        "trust.pinned": bool(keys),
        "source.hash": sha((folder / "source.bin").read_bytes()) == record["sha256"],
        "record.canonical": is_canonical(record_bytes),
        "record.signature": signed_by(record_bytes, keys, "record"),
        "text.checksum": sha((folder / "text.txt").read_bytes()) == record["text_sha256"],
        "pages.checksum": sha((folder / "pages.json").read_bytes()) == record["pages_sha256"],
    }
    searchable = record.get("searchable", "none")
    if searchable == "built":
        pdf = folder / "searchable.pdf"
        checks["pdf.checksum"] = pdf.is_file() and sha(pdf.read_bytes()) == record["pdf_sha256"]
    elif searchable == "original":
        checks["pdf.checksum"] = record["pdf_sha256"] == record["sha256"]
    if record.get("fields_sha256"):
        fields = folder / "fields.json"
        ok = fields.is_file() and sha(fields.read_bytes()) == record["fields_sha256"]
        checks["fields.checksum"] = ok
    checks.update(check_ledger(folder, record, record_bytes, keys))
    checks.update(check_receipts(folder, record["sha256"], keys))
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    if not keys:
        print("      no pinned key in the bundle: give --trust FPR (the key's SHA-256)")
    left = json.loads((folder / "ledger" / "proofs.json").read_bytes()).get("left_out", [])
    for item in left:  # said, never silent: what this bundle does not carry, and why
        what = f"event {item['seq']}" if "seq" in item else f"receipt {item.get('receipt')}"
        print(f"      left out: {what}: {item.get('why')}")
    verdict = all(checks.values())
    print("PASS" if verdict else "FAIL")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
