"""The payload codec: every Temporal payload sealed with AES-256-GCM.

Whoever reads Temporal's database or an exported history sees ciphertext and a
key ID. Each payload is ``nonce(12) | ciphertext | tag(16)`` of the whole
serialised payload (its metadata too), with the key ID in the metadata and
bound as associated data, so a payload cannot be relabelled to another key.

Payloads without the encryption marker pass through ``decode`` unchanged in
development, so the histories recorded before encryption
(tests/workflows/histories) still replay. With ``require_sealed`` (every
production client, starter.client.connect) such a payload is refused with
``SEAL_INVALID``: a worker must not act on inputs anyone could have written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from custody.errors import ConfigurationError, SealInvalid
from custody.keys.keyring import Keyring

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
_NONCE = 12


class EncryptionCodec(PayloadCodec):
    def __init__(self, keyring: Keyring, *, require_sealed: bool = False) -> None:
        self.keyring = keyring
        self.require_sealed = require_sealed

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        kid, key = self.keyring.current()
        aead = AESGCM(key)
        return [_seal(aead, kid, p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._open(p) for p in payloads]

    def _open(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            if self.require_sealed:
                raise SealInvalid(detail="payload is not sealed")
            return payload  # recorded before encryption, or never encrypted
        kid = payload.metadata[KEY_ID].decode()
        aead = AESGCM(self.keyring.payload_key(kid))
        nonce, sealed = payload.data[:_NONCE], payload.data[_NONCE:]
        try:
            plain = aead.decrypt(nonce, sealed, kid.encode())
        except InvalidTag:
            raise ConfigurationError(
                detail=f"payload under key {kid} fails authentication"
            ) from None
        return Payload.FromString(plain)


def _seal(aead: AESGCM, kid: str, payload: Payload) -> Payload:
    nonce = os.urandom(_NONCE)
    sealed = aead.encrypt(nonce, payload.SerializeToString(), kid.encode())
    return Payload(metadata={"encoding": ENCODING, KEY_ID: kid.encode()}, data=nonce + sealed)
