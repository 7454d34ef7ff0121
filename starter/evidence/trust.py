"""The trust anchor: which signing keys verification accepts, decided outside the store.

A public key found in the object store proves nothing on its own: whoever can
write the store can publish one and re-sign records with it. Verification
therefore pins the keys it accepts by fingerprint (the SHA-256 of the raw
32-byte Ed25519 public key, 64 hex characters; a key ID is its first 16), taken
from configuration (``CUSTODY_TRUST_FPRS``, comma-separated) or the command line
(``--trust FPR``, repeatable). When neither names one, in development the
anchors are the keys of the local signing folder or secret (``local-keyring``:
key material the operator holds, never the store's copy); in production that
is a ``ConfigurationError`` (``TRUST_ANCHOR_MISSING``) before anything is
checked, since the workers' own keyring is exactly what an insider holds.

A pinned key must also be within its validity period (``valid_from``,
``valid_to``, which its published record carries under its own signature) at
the signing time, and, when ``CUSTODY_ENV=production``, not a development key.

    anchors = TrustAnchors.from_settings(settings, ["3f1c...e9"])
    anchors.check(record, at=signed_at)        # raises KeyUntrusted with a code
    why = anchors.verify(body, signature, public_keys(store), at=signed_at)
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from custody.errors import Code, ConfigurationError, KeyUntrusted, UsageError
from custody.ledger.signing import PublicKeyRecord, Signature, local_public_keys, verify
from custody.settings import Settings

_FPR = re.compile(r"^[0-9a-f]{64}$")


def fingerprint(public_key: bytes | Ed25519PublicKey) -> str:
    """SHA-256 of the raw public key, lower-case hex (the key ID is its first 16)."""
    raw = (
        public_key
        if isinstance(public_key, bytes)
        else public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    )
    return hashlib.sha256(raw).hexdigest()


def key_fingerprint(record: PublicKeyRecord) -> str:
    """The fingerprint of a published key record's public key."""
    return fingerprint(base64.b64decode(record.public_key))


def _parse_fingerprint(text: str) -> str:
    """``FPR`` or ``SHA256:FPR``, any case; a usage error for anything else (no prefixes)."""
    value = text.strip().lower().removeprefix("sha256:")
    if not _FPR.match(value):
        raise UsageError(detail="a trusted key is 64 hex characters (SHA-256 of the public key)")
    return value


@dataclass(frozen=True)
class TrustAnchors:
    fingerprints: frozenset[str]
    production: bool = False
    #: Where the anchors came from: "pinned" (settings or command line) or "local".
    source: str = "pinned"

    @classmethod
    def from_settings(cls, settings: Settings, extra_fprs: Sequence[str] = ()) -> TrustAnchors:
        production = settings.env == "production"
        pinned = [f for f in settings.trust_fprs.replace(" ", ",").split(",") if f]
        pinned += list(extra_fprs)
        if pinned:
            return cls(frozenset(_parse_fingerprint(f) for f in pinned), production)
        if production:
            raise ConfigurationError(
                Code.TRUST_ANCHOR_MISSING,
                "CUSTODY_ENV=production verifies only against pinned keys:"
                " set CUSTODY_TRUST_FPRS or pass --trust FPR",
            )
        secret = settings.signing_key.get_secret_value() if settings.signing_key else None
        local = local_public_keys(settings.signing_path, secret, production=production)
        return cls(frozenset(fingerprint(k) for k in local), production, "local")

    @property
    def label(self) -> str:
        """What a report says it trusted: ``pinned``, or ``local-keyring`` (development)."""
        return "pinned" if self.source == "pinned" else "local-keyring"

    @classmethod
    def pinned(cls, fprs: Iterable[str], *, production: bool = False) -> TrustAnchors:
        return cls(frozenset(_parse_fingerprint(f) for f in fprs), production)

    def check(
        self, public_key: bytes | Ed25519PublicKey | PublicKeyRecord, *, at: datetime
    ) -> None:
        """Raise :class:`KeyUntrusted` unless this key may have signed something at ``at``.

        A bare key is checked for its fingerprint only; a published record also
        for its self-signature, its validity period and its development flag.
        """
        if isinstance(public_key, PublicKeyRecord):
            record: PublicKeyRecord | None = public_key
            fpr = key_fingerprint(public_key)
        else:
            record, fpr = None, fingerprint(public_key)
        if not self.fingerprints:
            raise KeyUntrusted(
                Code.KEY_UNTRUSTED, "no trust anchor: set CUSTODY_TRUST_FPRS or pass --trust FPR"
            )
        if fpr not in self.fingerprints:
            raise KeyUntrusted(Code.KEY_UNTRUSTED, f"key {fpr[:16]} is not a trust anchor")
        if record is not None:
            self._check_record(record, at)

    def _check_record(self, record: PublicKeyRecord, at: datetime) -> None:
        if not record.self_signed() and not self._legacy_ok(record):
            raise KeyUntrusted(Code.KEY_UNTRUSTED, f"key {record.kid} record is not self-signed")
        if record.development and self.production:
            raise KeyUntrusted(
                Code.KEY_DEVELOPMENT, f"key {record.kid} is a development key (production)"
            )
        if not record.valid_at(at):
            raise KeyUntrusted(
                Code.KEY_OUTSIDE_VALIDITY, f"key {record.kid} was not valid at {at.isoformat()}"
            )

    def trusted(self, keys: Mapping[str, PublicKeyRecord]) -> dict[str, PublicKeyRecord]:
        """The records of ``keys`` this anchor trusts, for a check that takes a key dict
        (validity is not checked here: no signing time is known)."""
        found = {}
        for kid, record in keys.items():
            try:
                self.check(record, at=record.valid_from or record.created_at)
            except KeyUntrusted:
                continue
            found[kid] = record
        return found

    def _legacy_ok(self, record: PublicKeyRecord) -> bool:
        """A record published before records were self-signed: no validity to protect, but
        its development flag is unproven, so production accepts it only when pinned."""
        legacy = record.self_sig is None and record.valid_from is None and record.valid_to is None
        return legacy and (not self.production or self.source == "pinned")

    def verify(
        self,
        body: bytes,
        signature: Signature,
        keys: Mapping[str, PublicKeyRecord],
        *,
        at: datetime,
    ) -> str | None:
        """None if ``signature`` over ``body`` verifies with a trusted key valid at ``at``.

        Otherwise why not, beginning with a code (``KEY_UNTRUSTED: ...``), so a
        check's detail names the reason. ``keys`` is where public keys are found
        (the store's, or a bundle's): finding one there grants nothing.
        """
        record = keys.get(signature.kid)
        if record is None:
            return f"{Code.KEY_UNTRUSTED}: unknown key id {signature.kid}"
        try:
            self.check(record, at=at)
        except KeyUntrusted as err:
            return str(err)
        return verify(body, signature, {record.kid: record})
