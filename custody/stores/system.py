"""The audit ledger's view of the store: sealed under the system's key, not a tenant's.

``SealedStore`` picks each object's key-encryption key from the tenant segment
of its key, so a shredded tenant's objects no longer open. The ledger holds
hashes, codes and ids (no document content) and must outlive that, so its
objects are sealed under the KEK of scope ``_system``, which no tenant can be
named (tenants match ``[a-z0-9][a-z0-9_-]*``). Objects the ledger wrote before
this change were sealed under the tenant's KEK and still open with it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import BinaryIO

from custody.errors import ConfigurationError
from custody.keys.keyring import Keyring
from custody.stores.base import ObjectStore

SYSTEM_SCOPE = "_system"


def system_sealed(store: ObjectStore) -> ObjectStore:
    """``store`` with its sealing layer under the system KEK; itself when nothing seals.

    Wrappers above the sealing layer (a breaker, patient retries) are kept: each
    is copied with its ``inner`` replaced, sharing its state with the original.
    """
    from custody.stores.sealed import SealedStore

    if isinstance(store, SealedStore):
        if store.scope is not None:
            return store
        return _SystemSealed(store, SealedStore(store.inner, store.keyring, SYSTEM_SCOPE))
    inner = getattr(store, "inner", None)
    if inner is None:
        return store
    replaced = system_sealed(inner)
    if replaced is inner:
        return store
    clone = copy.copy(store)
    clone.inner = replaced  # type: ignore[attr-defined]
    return clone


def system_log_store(store: ObjectStore, keyring: Keyring | None) -> ObjectStore:
    """The store the system log is read and written through, given the store a caller holds.

    State versions live plain (``open_raw_store``) beside a log that the rest of the
    deployment seals under the system KEK: a reader of state that opened the log
    through its plain store read ciphertext. Given the deployment's ``keyring``, a
    plain store is seen as the ledger sees it: written sealed under the system KEK,
    read sealed (or, for an object written plain, as it is). A store that already
    seals, or a deployment without keys, is used as it is.
    """
    from custody.stores.sealed import SealedStore

    if keyring is None or _seals(store):
        return system_sealed(store)
    return _SystemSealed(store, SealedStore(store, keyring, SYSTEM_SCOPE))


def _seals(store: ObjectStore) -> bool:
    from custody.stores.sealed import SealedStore

    while store is not None:
        if isinstance(store, SealedStore | _SystemSealed):
            return True
        store = getattr(store, "inner", None)  # type: ignore[assignment]
    return False


class _SystemSealed:
    """Writes under the system KEK; reads try it first, then the tenant's (older ledgers),
    or the plain store itself (:func:`system_log_store`: an object written plain)."""

    def __init__(self, tenant: ObjectStore, system: ObjectStore) -> None:
        self._tenant = tenant
        self._system = system

    def __repr__(self) -> str:
        return f"SystemSealed({self._system!r})"

    def create(self, key: str, data: bytes) -> bool:
        return self._system.create(key, data)

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        return self._system.create_from_file(key, src)

    def put(self, key: str, data: bytes) -> None:
        self._system.put(key, data)

    def get(self, key: str) -> bytes:
        from custody.stores.sealed import SealInvalid

        try:
            return self._system.get(key)
        except (SealInvalid, ConfigurationError):
            return self._tenant.get(key)  # sealed before the ledger moved to the system KEK

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        data = self.get(key)
        dst.write(data)
        return len(data)

    def exists(self, key: str) -> bool:
        return self._system.exists(key)

    def size(self, key: str) -> int:
        return self._system.size(key)

    def delete(self, key: str) -> None:
        self._system.delete(key)

    def list(self, prefix: str) -> Iterator[str]:
        return self._system.list(prefix)
