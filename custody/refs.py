"""Signed references to objects, so workflow history cannot point a worker elsewhere.

Workflow history carries object keys (intake, source, OCR pages), and anyone
who can start a workflow or alter history could put another tenant's key
there. So every key an activity is handed comes with an HMAC-SHA256 over
``(key, tenant, sha256)``, made by whoever created the reference: the starter
for the intake object, the activities for what they write. The HMAC key is
derived from the keyring's payload key (``Keyring.ref_key``), never stored in
the object store, and the signature names the key ID so rotation keeps old
references valid:

    <payload kid>.<hex HMAC-SHA256("custody-ref/1" \\0 key \\0 tenant \\0 sha256)>

Every activity checks a reference before it touches the object and refuses it
with ``REF_INVALID`` (non-retryable, quarantined) when:

- the key is not under the document's own tenant and hash
  (``<kind>/<tenant or _>/<sha256>[/...]``): checked always, keys or none;
- the signature is missing, names an unknown key, or does not match.

A missing signature is what a workflow started before references were signed
carries. It is accepted only until ``CUSTODY_REFS_UNSIGNED_UNTIL`` (a drain
window an operator sets when upgrading), and then only for keys that pass the
tenant-and-hash check. Without a keyring (the plain development mode) nothing
can be signed, so only the tenant-and-hash check applies.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime

from custody import ids
from custody.errors import ConfigurationError
from custody.errors import RefInvalid as RefInvalid
from custody.keys.keyring import Keyring

_DOMAIN = b"custody-ref/1"


class RefKeys:
    """Signs and checks object references with the keyring's derived HMAC key."""

    def __init__(self, keyring: Keyring | None) -> None:
        self._ring = keyring

    @classmethod
    def for_store(cls, store: object) -> RefKeys:
        """References are signed exactly when objects are sealed: same keyring."""
        ring = getattr(store, "keyring", None)
        return cls(ring if isinstance(ring, Keyring) else None)

    @property
    def signing(self) -> bool:
        return self._ring is not None

    def sign(self, key: str, tenant: str | None, sha256: str) -> str | None:
        """The reference's signature; None when no keyring is configured."""
        if self._ring is None:
            return None
        kid, _ = self._ring.current()
        return f"{kid}.{_mac(self._ring.ref_key(kid), key, tenant, sha256)}"

    def sign_all(self, keys: list[str], tenant: str | None, sha256: str) -> list[str]:
        sigs = [self.sign(k, tenant, sha256) for k in keys]
        return [s for s in sigs if s is not None]

    def check(self, key: str, tenant: str | None, sha256: str, sig: str | None) -> str:
        """``key`` if it may be opened for this document; else ``RefInvalid``."""
        parts = key.split("/")
        # The detail names the tenant scope only: keys hold hashes, never text.
        if len(parts) < 3 or parts[1] != ids.scope(tenant) or parts[2] != sha256:
            raise RefInvalid(detail=f"reference outside tenant {ids.scope(tenant)}'s document")
        if self._ring is None:
            return key
        if sig is None:
            if self._unsigned_allowed():
                return key
            raise RefInvalid(detail="unsigned reference")
        kid, _, mac = sig.partition(".")
        try:
            expected = _mac(self._ring.ref_key(kid), key, tenant, sha256)
        except ConfigurationError:
            raise RefInvalid(detail="reference signed by an unknown key") from None
        # Bytes, not str: compare_digest raises TypeError on a non-ASCII str, which
        # would be retried as a fault instead of refused as the forgery it is.
        if not hmac.compare_digest(mac.encode("utf-8", "surrogatepass"), expected.encode()):
            raise RefInvalid(detail="reference signature does not match")
        return key

    def check_all(
        self, keys: list[str], tenant: str | None, sha256: str, sigs: list[str]
    ) -> list[str]:
        """Every key checked: one signature per key, in order, or none at all (unsigned)."""
        if sigs and len(sigs) != len(keys):
            raise RefInvalid(detail=f"{len(sigs)} signatures for {len(keys)} references")
        padded: list[str | None] = [*sigs] if sigs else [None] * len(keys)
        return [self.check(k, tenant, sha256, s) for k, s in zip(keys, padded, strict=True)]

    def _unsigned_allowed(self) -> bool:
        until = self._ring.unsigned_refs_until if self._ring else None
        return until is not None and datetime.now(UTC) < _aware(until)


def _mac(secret: bytes, key: str, tenant: str | None, sha256: str) -> str:
    message = b"\0".join([_DOMAIN, key.encode(), ids.scope(tenant).encode(), sha256.encode()])
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
