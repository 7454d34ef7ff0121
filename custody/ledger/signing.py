"""Ed25519 signing keys for evidence records and ledger checkpoints.

The private key comes from settings: ``CUSTODY_SIGNING_KEY`` (base64 of the
32-byte seed, an environment secret) or the newest key file in
``CUSTODY_SIGNING_DIR`` (default ``CUSTODY_HOME/signing``, 0600 files in a 0700
folder; a folder or key file group or world can read is refused,
``KEY_PERMISSIONS``). A development key is made there on first use; in
production it is refused (``KEY_DEVELOPMENT``), for signing and at verification.

Each key file ``<stamp>-<prod|dev>.key`` may have ``<stamp>-<prod|dev>.json``
beside it with its validity period (``valid_from``, ``valid_to``); a key is
not used to sign outside it (``KEY_OUTSIDE_VALIDITY``). Rotating ends the
previous key's validity now, and in production a key with no validity at all
(``CUSTODY_SIGNING_KEY``, or a key file without its ``.json``) is refused: a
retired key that still verified new signatures would make rotation mean nothing.

Public keys are published to the object store under ``keys/signing/<kid>.json``
with their validity, self-signed so the store cannot change it, so verifiers
need no access to the private side and a rotated key still verifies what it
signed. A key's end is published beside it (``keys/signing/retired/<kid>.json``,
self-signed too); verifiers take the earlier end of the two. Which published
keys verification *trusts* is decided outside the store (``starter.evidence.trust``);
the records and signature checks are custody.ledger.keyrecords. The key ID is the
first 16 hex characters of the SHA-256 of the raw public key (its fingerprint, all 64).
"""

from __future__ import annotations

import base64
import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from custody.canonical import canonical_json
from custody.errors import Code, ConfigurationError, KeyUntrusted
from custody.ledger.keyrecords import ALGORITHM as ALGORITHM
from custody.ledger.keyrecords import PUBLIC_PREFIX as PUBLIC_PREFIX
from custody.ledger.keyrecords import PublicKeyRecord as PublicKeyRecord
from custody.ledger.keyrecords import Signature as Signature
from custody.ledger.keyrecords import key_id as key_id
from custody.ledger.keyrecords import public_keys as public_keys
from custody.ledger.keyrecords import verify as verify
from custody.settings import Settings
from custody.stores import ObjectStore


class Signer:
    def __init__(
        self,
        private: Ed25519PrivateKey,
        development: bool = False,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
    ) -> None:
        self._private = private
        self.public = private.public_key()
        self.kid = key_id(self.public)
        self.development = development
        self.valid_from, self.valid_to = valid_from, valid_to

    def sign(self, body: bytes) -> Signature:
        now = datetime.now(UTC)
        if (self.valid_from and now < self.valid_from) or (self.valid_to and now > self.valid_to):
            raise KeyUntrusted(Code.KEY_OUTSIDE_VALIDITY, f"key {self.kid} is not valid now")
        return Signature(kid=self.kid, sig=base64.b64encode(self._private.sign(body)).decode())

    def public_record(self) -> PublicKeyRecord:
        raw = self.public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        record = PublicKeyRecord(
            kid=self.kid,
            public_key=base64.b64encode(raw).decode(),
            created_at=datetime.now(UTC),
            development=self.development,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
        )
        self_sig = base64.b64encode(self._private.sign(record.body())).decode()
        return record.model_copy(update={"self_sig": self_sig})

    def publish(self, store: ObjectStore) -> None:
        """Make the public half available to verifiers (once; never replaced); a key that
        has ended also publishes its retirement, which shortens what verifiers accept."""
        store.create(f"{PUBLIC_PREFIX}{self.kid}.json", canonical_json(self.public_record()))
        if self.valid_to is not None and self.valid_to <= datetime.now(UTC):
            retired = f"{PUBLIC_PREFIX}retired/{self.kid}.json"
            store.create(retired, canonical_json(self.public_record()))


def load_signer(key_dir: Path, secret: str | None, production: bool) -> Signer:
    """The active signing key: the secret if given, else the newest key file."""
    if secret:
        if production:
            raise KeyUntrusted(
                Code.KEY_OUTSIDE_VALIDITY,
                "CUSTODY_SIGNING_KEY has no validity period: use a key folder in production",
            )
        return Signer(Ed25519PrivateKey.from_private_bytes(base64.b64decode(secret)))
    files = _key_files(key_dir)
    if not files:
        if production:
            raise ConfigurationError(
                detail="no signing key: set CUSTODY_SIGNING_KEY or CUSTODY_SIGNING_DIR"
            )
        return rotate(key_dir, development=True)
    signer = _read_key(files[-1])
    if signer.development and production:
        raise KeyUntrusted(
            Code.KEY_DEVELOPMENT, "the signing key is a development key (CUSTODY_ENV=production)"
        )
    if production and signer.valid_from is None:
        raise KeyUntrusted(Code.KEY_OUTSIDE_VALIDITY, f"key {signer.kid} has no validity period")
    return signer


def signer_from_settings(settings: Settings) -> Signer:
    secret = settings.signing_key.get_secret_value() if settings.signing_key else None
    return load_signer(settings.signing_path, secret, production=settings.env == "production")


def local_public_keys(
    key_dir: Path, secret: str | None, *, production: bool
) -> list[Ed25519PublicKey]:
    """Every signing key held here (secret or folder), without making one; no
    development key in production."""
    if secret:
        return [Ed25519PrivateKey.from_private_bytes(base64.b64decode(secret)).public_key()]
    signers = [_read_key(path) for path in _key_files(key_dir)]
    return [s.public for s in signers if not (s.development and production)]


def rotate(key_dir: Path, development: bool = False, valid_days: float | None = None) -> Signer:
    """Make a new key, which becomes the active one; the one it replaces ends now (it stays
    for the record, verifying what it signed before)."""
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(key_dir, 0o700)
    private = Ed25519PrivateKey.generate()
    now = datetime.now(UTC)
    retire(key_dir, now)
    valid_to = now + timedelta(days=valid_days) if valid_days is not None else None
    name = key_dir / f"{now:%Y%m%dT%H%M%S%fZ}-{'dev' if development else 'prod'}"
    validity = {"valid_from": now.isoformat(), "valid_to": valid_to and valid_to.isoformat()}
    _write_private(name.with_suffix(".json"), json.dumps(validity).encode())
    # The key file last: a key is never found without its validity beside it.
    _write_private(name.with_suffix(".key"), base64.b64encode(private.private_bytes_raw()))
    return Signer(private, development, now, valid_to)


def retire(key_dir: Path, at: datetime) -> Signer | None:
    """End the active key's validity at ``at`` (if it ran later); the retired key, or None."""
    files = _key_files(key_dir)
    if not files:
        return None
    old = _read_key(files[-1])
    if old.valid_to is not None and old.valid_to <= at:
        return old
    meta = files[-1].with_suffix(".json")
    since = old.valid_from or at  # a key from before validity files: valid until now
    body = {"valid_from": since.isoformat(), "valid_to": at.isoformat()}
    tmp = meta.with_name(f".{meta.name}.tmp")
    tmp.unlink(missing_ok=True)
    _write_private(tmp, json.dumps(body).encode())
    os.replace(tmp, meta)
    return _read_key(files[-1])


def retired_keys(key_dir: Path) -> list[Signer]:
    """Every key of the folder whose validity has ended (to publish their retirement)."""
    now = datetime.now(UTC)
    signers = (_read_key(path) for path in _key_files(key_dir))
    return [s for s in signers if s.valid_to is not None and s.valid_to <= now]


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _key_files(key_dir: Path) -> list[Path]:
    if not key_dir.exists():
        return []
    _check_private(key_dir)
    return sorted(key_dir.glob("*.key"))


def _check_private(path: Path) -> None:
    """Group or world access to the key folder or a key file is refused, not repaired."""
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        raise ConfigurationError(
            Code.KEY_PERMISSIONS, f"{path.name} is readable beyond its owner (need 0700/0600)"
        )


def _read_key(path: Path) -> Signer:
    _check_private(path)
    seed = base64.b64decode(path.read_text())
    meta = path.with_suffix(".json")
    validity = json.loads(meta.read_text()) if meta.exists() else {}
    return Signer(
        Ed25519PrivateKey.from_private_bytes(seed),
        development=path.stem.endswith("-dev"),
        valid_from=_when(validity.get("valid_from")),
        valid_to=_when(validity.get("valid_to")),
    )


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
