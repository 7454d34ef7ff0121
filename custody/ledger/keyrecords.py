"""Signing keys as verifiers see them: public records in the store, and signatures checked.

``keys/signing/<kid>.json`` holds a key's public half and validity, signed by
the key itself so the store can neither extend a validity nor clear the
development flag; ``keys/signing/retired/<kid>.json`` its end, once rotated
out, signed the same way. :func:`public_keys` reads them, taking the earlier
end of a key's two records. Finding a key here decides nothing about trusting
it: that is ``starter.evidence.trust``'s, from fingerprints pinned outside.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import BaseModel

from custody.canonical import canonical_json, is_canonical
from custody.stores import ObjectStore

ALGORITHM = "Ed25519"
PUBLIC_PREFIX = "keys/signing/"


class Signature(BaseModel):
    alg: str = ALGORITHM
    kid: str
    sig: str  # base64


class PublicKeyRecord(BaseModel):
    kid: str
    alg: str = ALGORITHM
    public_key: str  # base64 of the 32 raw bytes
    created_at: datetime
    development: bool = False
    valid_from: datetime | None = None  # None: since ever (keys published before validity)
    valid_to: datetime | None = None  # None: no end
    #: The key's own signature over the record without this field: the store
    #: cannot extend a validity or clear the development flag.
    self_sig: str | None = None

    def body(self) -> bytes:
        return canonical_json(self.model_dump(mode="json", exclude={"self_sig"}))

    def self_signed(self) -> bool:
        if self.self_sig is None:
            return False
        signature = Signature(kid=self.kid, sig=self.self_sig)
        return verify(self.body(), signature, {self.kid: self}) is None

    def valid_at(self, at: datetime) -> bool:
        return (self.valid_from is None or at >= self.valid_from) and (
            self.valid_to is None or at <= self.valid_to
        )


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_keys(store: ObjectStore) -> dict[str, PublicKeyRecord]:
    """The keys published in the store: where to find a key, never whether to trust it."""
    keys: dict[str, PublicKeyRecord] = {}
    for key in store.list(PUBLIC_PREFIX):
        data = store.get(key)
        try:
            record = PublicKeyRecord.model_validate_json(data)
        except ValueError:
            continue  # an unreadable key record: signatures by it then fail as unknown
        if not is_canonical(data):
            continue  # not as Custody wrote it: its signatures fail as unknown too
        keys[record.kid] = _earlier_end(keys.get(record.kid), record)
    return keys


def _earlier_end(known: PublicKeyRecord | None, found: PublicKeyRecord) -> PublicKeyRecord:
    """Of a key's record and its retirement, the one ending first (each signed by the key
    itself, so the store can drop a retirement but never extend a validity)."""
    if known is None or known.public_key != found.public_key or not found.self_signed():
        return known or found
    if found.valid_to is not None and (known.valid_to is None or found.valid_to < known.valid_to):
        return found
    return known


def verify(body: bytes, signature: Signature, keys: dict[str, PublicKeyRecord]) -> str | None:
    """None if ``signature`` over ``body`` verifies with the key ``keys`` names; else why not.

    Checks the mathematics only: whether the key is trusted is for the reader to say
    (``starter.evidence.trust``).
    """
    record = keys.get(signature.kid)
    if record is None:
        return f"unknown key id {signature.kid}"
    if signature.alg != ALGORITHM:
        return f"unsupported algorithm {signature.alg}"
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(record.public_key))
    if key_id(public) != record.kid:
        return f"key record {record.kid} holds another key"
    try:
        public.verify(base64.b64decode(signature.sig), body)
    except InvalidSignature:
        return "signature does not verify"
    return None
