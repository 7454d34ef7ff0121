"""Find documents by a field value without a plaintext index.

Publish writes one empty index object per field read surely, under a keyed
hash of (tenant, field name, value in normal form):

    field-index/<tenant or _>/<hex HMAC-SHA256>/<document sha256>

``custody evidence find --field participant_id=P-00421`` hashes the query the
same way and lists that folder. The HMAC key is derived (HKDF, its own label)
from the keyring's payload keys, so a store reader without the keys learns
nothing from the index (participant IDs are too few to hide behind a plain
hash); a query tries every payload key, so rotation keeps older entries
found. Without a keyring (plain development mode) there is no index.

Values compare in normal form: case folded and spaces removed, so
``p-00421`` finds ``P 00421``; dates are ISO and totals decimal strings as
extraction writes them.
"""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from custody import ids
from custody.fields import Extraction
from custody.keys.keyring import Keyring
from custody.stores import ObjectStore

_INFO = b"custody-field-index/1"


def keyring_of(store: ObjectStore) -> Keyring | None:
    """The store's keyring: the index is keyed exactly when objects are sealed."""
    ring = getattr(store, "keyring", None)
    return ring if isinstance(ring, Keyring) else None


def normal(value: str | bool) -> str:
    text = ("true" if value else "false") if isinstance(value, bool) else value
    return "".join(text.split()).casefold()


def _index_key(ring: Keyring, kid: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO)
    return hkdf.derive(ring.payload_key(kid))


def _mac(secret: bytes, tenant: str | None, name: str, value: str | bool) -> str:
    message = b"\0".join([_INFO, ids.scope(tenant).encode(), name.encode(), normal(value).encode()])
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _prefix(tenant: str | None, mac: str) -> str:
    return f"field-index/{ids.scope(tenant)}/{mac}/"


def write(store: ObjectStore, tenant: str | None, sha256: str, extraction: Extraction) -> int:
    """Index every field read surely; returns how many entries exist for it."""
    ring = keyring_of(store)
    if ring is None:
        return 0
    kid, _ = ring.current()
    secret = _index_key(ring, kid)
    count = 0
    for name, found in sorted(extraction.fields.items()):
        if found.status == "found" and found.value is not None:
            store.create(_prefix(tenant, _mac(secret, tenant, name, found.value)) + sha256, b"{}")
            count += 1
    return count


def expected(
    store: ObjectStore, tenant: str | None, sha256: str, extraction: Extraction
) -> dict[str, list[str]] | None:
    """For each field read surely, the keys its entry may have (one per payload key, since
    any of them may have been current when it was written); None without a keyring."""
    ring = keyring_of(store)
    if ring is None:
        return None
    secrets = [_index_key(ring, kid) for kid in sorted(ring.payload)]
    return {
        name: [_prefix(tenant, _mac(s, tenant, name, found.value)) + sha256 for s in secrets]
        for name, found in sorted(extraction.fields.items())
        if found.status == "found" and found.value is not None
    }


def find(store: ObjectStore, tenant: str | None, name: str, value: str) -> list[str]:
    """SHA-256s of the tenant's documents whose field ``name`` reads ``value``."""
    ring = keyring_of(store)
    if ring is None:
        return []
    found: set[str] = set()
    for kid in sorted(ring.payload):
        prefix = _prefix(tenant, _mac(_index_key(ring, kid), tenant, name, value))
        found.update(key.removeprefix(prefix) for key in store.list(prefix))
    return sorted(found)
