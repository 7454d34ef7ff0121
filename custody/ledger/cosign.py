"""Witness cosignatures (C2SP tlog-cosignature, Ed25519) and verifier keys (signed-note vkeys).

A cosignature is one more signature line on a checkpoint's signed note:

    — <witness name> base64(key hash[4] || timestamp u64 big-endian || Ed25519 signature[64])

over ``cosignature/v1\\ntime <timestamp>\\n`` followed by the checkpoint body
(origin, size, root and any extension lines). The key hash is
SHA-256(name || 0x0A || 0x04 || public key)[:4]. It says: this witness saw
this checkpoint at that time and had verified it consistent with every
checkpoint of that log it cosigned before.

A vkey names a key outside the store: ``<name>+<key hash hex>+base64(type || key)``
with type 0x01 for a log's note signatures and 0x04 for a cosigner, as in Go's
``x/mod/sumdb/note`` and the C2SP specs, so one can be pinned in settings.

Pure and light (hashlib, base64, ``cryptography``).
"""

from __future__ import annotations

import base64
import hashlib
import struct

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

NOTE_KEY = 0x01
COSIGNATURE_KEY = 0x04
_DASH = "\u2014"
_TIME = struct.Struct(">Q")
MAX_TIMESTAMP = (1 << 63) - 1


def key_hash(name: str, public: Ed25519PublicKey, kind: int) -> bytes:
    raw = public.public_bytes_raw()
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + raw).digest()[:4]


def vkey(name: str, public: Ed25519PublicKey, kind: int = COSIGNATURE_KEY) -> str:
    """The verifier key string for ``public`` under ``name``."""
    blob = base64.b64encode(bytes([kind]) + public.public_bytes_raw()).decode()
    return f"{name}+{key_hash(name, public, kind).hex()}+{blob}"


def parse_vkey(text: str) -> tuple[str, int, Ed25519PublicKey]:
    """(name, key type, key) of a vkey; ValueError unless its key hash matches."""
    name, _, rest = text.strip().partition("+")  # a name holds no "+"; base64 may
    hash_hex, _, blob = rest.partition("+")
    raw = base64.b64decode(blob, validate=True)
    if not name or len(raw) != 33 or raw[0] not in (NOTE_KEY, COSIGNATURE_KEY):
        raise ValueError("not an Ed25519 vkey")
    public = Ed25519PublicKey.from_public_bytes(raw[1:])
    if key_hash(name, public, raw[0]).hex() != hash_hex.lower():
        raise ValueError("vkey hash mismatch")
    return name, raw[0], public


def _message(body: bytes, timestamp: int) -> bytes:
    return b"cosignature/v1\ntime %d\n" % timestamp + body


def cosign(body: bytes, name: str, private: Ed25519PrivateKey, timestamp: int) -> bytes:
    """The cosignature line (with its newline) over a checkpoint body."""
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise ValueError("cosignature time out of range")
    public = private.public_key()
    blob = key_hash(name, public, COSIGNATURE_KEY) + _TIME.pack(timestamp)
    blob += private.sign(_message(body, timestamp))
    return f"{_DASH} {name} {base64.b64encode(blob).decode()}\n".encode()


def body_of(note: bytes) -> bytes:
    """A signed note's text: everything before the blank line, with its final newline."""
    text, sep, _ = note.partition(b"\n\n")
    return text + b"\n" if sep else b""


def cosigned_by(note: bytes, witnesses: dict[str, Ed25519PublicKey]) -> dict[str, int]:
    """The witnesses (name -> timestamp) whose cosignature on ``note`` verifies;
    lines of unknown names are ignored, as signed-note verification does."""
    body, found = body_of(note), {}
    for line in note.partition(b"\n\n")[2].decode(errors="replace").splitlines():
        dash, _, rest = line.partition(" ")
        name, _, blob = rest.partition(" ")
        key = witnesses.get(name)
        if dash != _DASH or key is None or name in found:
            continue
        try:
            raw = base64.b64decode(blob, validate=True)
            (timestamp,) = _TIME.unpack(raw[4:12])
            if len(raw) == 76 and raw[:4] == key_hash(name, key, COSIGNATURE_KEY):
                key.verify(raw[12:], _message(body, timestamp))
                found[name] = timestamp
        except (ValueError, InvalidSignature, struct.error):
            continue
    return found
