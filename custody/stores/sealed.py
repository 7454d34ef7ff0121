"""Envelope encryption for every object Custody writes.

Each object gets a fresh 256-bit data key; the body is sealed with it
(AES-256-GCM) and the data key is wrapped by the tenant's key-encryption key
(the key's second path segment: ``records/<tenant>/...``; ``_`` is no tenant).
Destroying a tenant's KEK (``custody keys shred``) leaves its objects
unreadable (crypto-shredding) while other tenants' stay untouched.

Layout of a stored object (all lengths fixed, so the plaintext size follows
from the stored size without reading the object):

    magic(6) | plaintext size(8, big-endian) | wrap nonce(12) | wrapped key(48)
    | body nonce(12) | body ciphertext | tag(16)

The magic names the tenant's KEK version that wrapped the data key:
``CSTDY\x01`` is version 0 (the tenant's first KEK, and every object written
before KEKs rotated), ``CSTK`` + a 16-bit version is a later one
(``custody keys rotate --tenant T``). New objects use the newest version;
older objects keep opening with theirs.

The header and the object key are authenticated as associated data: an object
copied under another key or another tenant does not open.

``create_from_file`` streams (ciphertext goes through an anonymous temp file).
Reads are opened whole in memory, because GCM authenticates only at the end and
we never hand out unauthenticated plaintext: ``get`` and ``download`` buffer one
object, at most ``CUSTODY_LIMIT_MAX_BYTES`` (50 MiB by default) for sources.
"""

from __future__ import annotations

import os
import re
import struct
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import AEADEncryptionContext, Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from custody.errors import SealInvalid as SealInvalid
from custody.keys.keyring import Keyring
from custody.stores.base import ObjectStore

_MAGIC = b"CSTDY\x01"
_VERSIONED = b"CSTK"
_U16 = struct.Struct(">H")
_NONCE, _TAG, _KEY = 12, 16, 32
_CHUNK = 1 << 20
_HEADER = struct.Struct(f">{len(_MAGIC)}sQ{_NONCE}s{_KEY + _TAG}s{_NONCE}s")
OVERHEAD = _HEADER.size + _TAG
_SCOPE = re.compile(r"^[A-Za-z0-9_-]{1,63}$")


def _tenant_scope(key: str) -> str:
    """``records/<tenant>/...`` -> tenant; keys with no tenant segment share ``_``."""
    parts = key.split("/")
    if len(parts) > 2 and _SCOPE.match(parts[1]):
        return parts[1]
    return "_"


class SealedStore:
    """An :class:`ObjectStore` that encrypts on the way in and decrypts on the way out."""

    def __init__(self, inner: ObjectStore, keyring: Keyring, scope: str | None = None) -> None:
        self.inner = inner
        self.keyring = keyring
        # A fixed KEK scope instead of the key's tenant: the audit ledger is sealed
        # under the system's KEK, so it outlives a shredded tenant (custody.ledger).
        self.scope = scope

    def __repr__(self) -> str:
        return f"SealedStore({self.inner!r})"

    def create(self, key: str, data: bytes) -> bool:
        # The inner store's conditional create decides races, on the ciphertext.
        return self.inner.create(key, self._seal(key, data))

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        """Encrypts chunk by chunk into an anonymous temp file (ciphertext only), then creates."""
        start = src.tell()
        size = src.seek(0, os.SEEK_END) - start
        src.seek(start)
        with tempfile.TemporaryFile() as sealed:
            header, enc = self._begin(key, size)
            sealed.write(header)
            while chunk := src.read(_CHUNK):
                sealed.write(enc.update(chunk))
            sealed.write(enc.finalize() + enc.tag)
            sealed.seek(0)
            return self.inner.create_from_file(key, sealed)

    def put(self, key: str, data: bytes) -> None:
        self.inner.put(key, self._seal(key, data))

    def get(self, key: str) -> bytes:
        return self._open(key, self.inner.get(key))

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        data = self.get(key)
        for start in range(0, len(data), chunk_size):
            dst.write(data[start : start + chunk_size])
        return len(data)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def size(self, key: str) -> int:
        """Plaintext length: GCM adds no padding, so it is the stored size less the overhead."""
        return max(0, self.inner.size(key) - OVERHEAD)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def list(self, prefix: str) -> Iterator[str]:
        return self.inner.list(prefix)

    def _seal(self, key: str, data: bytes) -> bytes:
        header, enc = self._begin(key, len(data))
        return header + enc.update(data) + enc.finalize() + enc.tag

    def _begin(self, key: str, size: int) -> tuple[bytes, AEADEncryptionContext]:
        """A fresh data key wrapped by the tenant's KEK, and the body's encryptor."""
        version, kek_bytes = self.keyring.current_kek(self.scope or _tenant_scope(key), create=True)
        kek = AESGCM(kek_bytes)
        dek = AESGCM.generate_key(bit_length=256)
        wrap_nonce, body_nonce = os.urandom(_NONCE), os.urandom(_NONCE)
        wrapped = kek.encrypt(wrap_nonce, dek, key.encode())
        header = _HEADER.pack(_magic(version), size, wrap_nonce, wrapped, body_nonce)
        enc = Cipher(algorithms.AES(dek), modes.GCM(body_nonce)).encryptor()
        enc.authenticate_additional_data(header + key.encode())
        return header, enc

    def _open(self, key: str, blob: bytes) -> bytes:
        version = _version(blob[: len(_MAGIC)])
        if len(blob) < OVERHEAD or version is None:
            raise SealInvalid(detail=f"{key}: not a sealed object")
        header = blob[: _HEADER.size]
        _magic, size, wrap_nonce, wrapped, body_nonce = _HEADER.unpack(header)
        kek = AESGCM(self.keyring.kek(self.scope or _tenant_scope(key), version=version))
        try:
            dek = kek.decrypt(wrap_nonce, wrapped, key.encode())
            data = AESGCM(dek).decrypt(body_nonce, blob[_HEADER.size :], header + key.encode())
        except InvalidTag:
            raise SealInvalid(detail=f"{key}: fails authentication") from None
        if len(data) != size:
            raise SealInvalid(detail=f"{key}: size mismatch")
        return data


def _magic(version: int) -> bytes:
    return _MAGIC if version == 0 else _VERSIONED + _U16.pack(version)


def _version(magic: bytes) -> int | None:
    """The KEK version a header's magic names; None when it is not a sealed object."""
    if magic == _MAGIC:
        return 0
    if magic.startswith(_VERSIONED) and len(magic) == len(_MAGIC):
        return int(_U16.unpack(magic[len(_VERSIONED) :])[0])
    return None
