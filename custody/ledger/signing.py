"""Ed25519 signing keys for evidence records and ledger checkpoints.

The private key comes from settings: ``CUSTODY_SIGNING_KEY`` (base64 of the
32-byte seed, an environment secret) or the newest key file in
``CUSTODY_SIGNING_DIR`` (default ``CUSTODY_HOME/signing``, 0600 files in a 0700
folder; a folder or key file group or world can read is refused,
``KEY_PERMISSIONS``). A development key is made there on first use; in
production it is refused (``KEY_DEVELOPMENT``), for signing and at verification.

Each key file ``<stamp>-<prod|dev>.key`` may have ``<stamp>-<prod|dev>.json``
beside it with its validity period (``valid_from``, ``valid_to``); a key is
not used to sign outside it (``KEY_OUTSIDE_VALIDITY``).

Public keys are published to the object store under ``keys/signing/<kid>.json``
with their validity, self-signed so the store cannot change it, so verifiers
need no access to the private side and a rotated key still verifies what it
signed. Which published keys verification *trusts* is decided outside the store
(``starter.evidence.trust``). The key ID is the first 16 hex characters of the SHA-256 of
the raw public key (its fingerprint, all 64).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import BaseModel

from custody.canonical import canonical_json, is_canonical
from custody.errors import Code, ConfigurationError, KeyUntrusted
from custody.settings import Settings
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
        """Make the public half available to verifiers (once; never replaced)."""
        store.create(f"{PUBLIC_PREFIX}{self.kid}.json", canonical_json(self.public_record()))


def load_signer(key_dir: Path, secret: str | None, production: bool) -> Signer:
    """The active signing key: the secret if given, else the newest key file."""
    if secret:
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
    """Make a new key, which becomes the active one; old keys stay for the record."""
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(key_dir, 0o700)
    private = Ed25519PrivateKey.generate()
    now = datetime.now(UTC)
    valid_to = now + timedelta(days=valid_days) if valid_days is not None else None
    name = key_dir / f"{now:%Y%m%dT%H%M%S%fZ}-{'dev' if development else 'prod'}"
    validity = {"valid_from": now.isoformat(), "valid_to": valid_to and valid_to.isoformat()}
    _write_private(name.with_suffix(".json"), json.dumps(validity).encode())
    # The key file last: a key is never found without its validity beside it.
    _write_private(name.with_suffix(".key"), base64.b64encode(private.private_bytes_raw()))
    return Signer(private, development, now, valid_to)


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


def public_keys(store: ObjectStore) -> dict[str, PublicKeyRecord]:
    """The keys published in the store: where to find a key, never whether to trust it."""
    keys = {}
    for key in store.list(PUBLIC_PREFIX):
        data = store.get(key)
        try:
            record = PublicKeyRecord.model_validate_json(data)
        except ValueError:
            continue  # an unreadable key record: signatures by it then fail as unknown
        if not is_canonical(data):
            continue  # not as Custody wrote it: its signatures fail as unknown too
        keys[record.kid] = record
    return keys


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
