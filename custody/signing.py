"""Ed25519 signing keys for evidence records and ledger checkpoints.

The private key comes from settings: ``CUSTODY_SIGNING_KEY`` (base64 of the
32-byte seed, an environment secret) or the newest key file in
``CUSTODY_SIGNING_DIR`` (default ``CUSTODY_HOME/signing``, 0600 files in a 0700
folder). A development key is made there on first use, never in production.

Public keys are published to the object store under ``keys/signing/<kid>.json``
with their validity, so verifiers need no access to the private side and a
rotated key still verifies what it signed. The key ID is the first 16 hex
characters of the SHA-256 of the raw public key.
"""

from __future__ import annotations

import base64
import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import BaseModel

from custody.canonical import canonical_json
from custody.errors import ConfigurationError
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


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


class Signer:
    def __init__(self, private: Ed25519PrivateKey, development: bool = False) -> None:
        self._private = private
        self.public = private.public_key()
        self.kid = key_id(self.public)
        self.development = development

    def sign(self, body: bytes) -> Signature:
        return Signature(kid=self.kid, sig=base64.b64encode(self._private.sign(body)).decode())

    def public_record(self) -> PublicKeyRecord:
        raw = self.public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        return PublicKeyRecord(
            kid=self.kid,
            public_key=base64.b64encode(raw).decode(),
            created_at=datetime.now(UTC),
            development=self.development,
        )

    def publish(self, store: ObjectStore) -> None:
        """Make the public half available to verifiers (once; never replaced)."""
        store.create(f"{PUBLIC_PREFIX}{self.kid}.json", canonical_json(self.public_record()))


def load_signer(key_dir: Path, secret: str | None, production: bool) -> Signer:
    """The active signing key: the secret if given, else the newest key file."""
    if secret:
        seed = base64.b64decode(secret)
        return Signer(Ed25519PrivateKey.from_private_bytes(seed))
    files = sorted(key_dir.glob("*.key")) if key_dir.exists() else []
    if not files:
        if production:
            raise ConfigurationError(
                detail="no signing key: set CUSTODY_SIGNING_KEY or CUSTODY_SIGNING_DIR"
            )
        return rotate(key_dir, development=True)
    newest = files[-1]
    seed = base64.b64decode(newest.read_text())
    return Signer(Ed25519PrivateKey.from_private_bytes(seed), development="dev" in newest.name)


def signer_from_settings(settings: Settings) -> Signer:
    secret = settings.signing_key.get_secret_value() if settings.signing_key else None
    return load_signer(settings.signing_path, secret, production=settings.env == "production")


def rotate(key_dir: Path, development: bool = False) -> Signer:
    """Make a new key, which becomes the active one; old keys stay for the record."""
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(key_dir, 0o700)
    private = Ed25519PrivateKey.generate()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    name = key_dir / f"{stamp}-{'dev' if development else 'prod'}.key"
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    seed = private.private_bytes_raw()
    with os.fdopen(fd, "w") as out:
        out.write(base64.b64encode(seed).decode())
    return Signer(private, development=development)


def public_keys(store: ObjectStore) -> dict[str, PublicKeyRecord]:
    keys = {}
    for key in store.list(PUBLIC_PREFIX):
        record = PublicKeyRecord.model_validate_json(store.get(key))
        keys[record.kid] = record
    return keys


def verify(body: bytes, signature: Signature, keys: dict[str, PublicKeyRecord]) -> str | None:
    """None if ``signature`` over ``body`` verifies; else why not."""
    record = keys.get(signature.kid)
    if record is None:
        return f"unknown key id {signature.kid}"
    if signature.alg != ALGORITHM:
        return f"unsupported algorithm {signature.alg}"
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(record.public_key))
    try:
        public.verify(base64.b64decode(signature.sig), body)
    except InvalidSignature:
        return "signature does not verify"
    return None
