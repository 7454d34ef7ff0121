"""The keys that sign security-relevant state versions, and those a reader trusts.

State versions (:mod:`custody.state.versions`) are signed with the system signing key
(:mod:`custody.ledger.signing`, the key evidence is signed with) and verified against
keys held *outside* the store: the active key and every older key file in the
signing folder, so a rotation keeps old versions readable. Public keys the
store publishes (``keys/signing/``) are never trusted here: whoever can write
the store could publish one.

Callers that hold settings pass ``state_keys(settings)``; the rest get
``default_keys()``, built from the process environment (``CUSTODY_HOME``,
``CUSTODY_SIGNING_KEY``, ``CUSTODY_SIGNING_DIR``) the way ``main()`` builds
its settings, and rebuilt when that folder gains a key.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from custody.errors import ConfigurationError
from custody.keys.keyring import Keyring, keys_dir, load_keyring
from custody.ledger.checkpoints import open_witness
from custody.ledger.signing import (
    ALGORITHM,
    Signature,
    Signer,
    key_id,
    local_public_keys,
    signer_from_settings,
)
from custody.settings import Settings
from custody.stores import ObjectStore


@dataclass(frozen=True)
class StateKeys:
    """Who signs new versions (None: this process only reads) and which keys verify them."""

    signer: Signer | None
    trusted: Mapping[str, Ed25519PublicKey] = field(default_factory=dict)
    #: Where the system log's checkpoints are witnessed (custody.state.anchor), if anywhere.
    witness: ObjectStore | None = None
    #: The deployment's keyring: the system log is sealed under its system KEK, also when
    #: state itself is read through a plain store (custody.stores.system.system_log_store).
    keyring: Keyring | None = None

    def sign(self, payload: bytes) -> Signature:
        if self.signer is None:
            raise ConfigurationError(detail="no signing key: state versions cannot be written")
        return self.signer.sign(payload)

    def check(self, payload: bytes, signature: Signature) -> str | None:
        """None if ``signature`` over ``payload`` is a trusted key's; else why not."""
        public = self.trusted.get(signature.kid)
        if public is None or signature.alg != ALGORITHM:
            return f"key {signature.kid[:16]} not trusted"
        try:
            public.verify(base64.b64decode(signature.sig, validate=True), payload)
        except (InvalidSignature, ValueError):
            return "signature does not verify"
        return None


def state_keys(settings: Settings) -> StateKeys:
    """The active signing key, trusting it and every key file beside it; the witness, if any."""
    signer = signer_from_settings(settings)
    trusted = dict(_folder_keys(settings.signing_path))
    trusted[signer.kid] = signer.public
    return StateKeys(signer, trusted, open_witness(settings), _keyring(settings))


def _reader_keys(settings: Settings) -> StateKeys:
    secret = settings.signing_key.get_secret_value() if settings.signing_key else None
    held = local_public_keys(settings.signing_path, secret, production=settings.env == "production")
    trusted = {**_folder_keys(settings.signing_path), **{key_id(k): k for k in held}}
    return StateKeys(None, trusted, open_witness(settings), _keyring(settings))


def _keyring(settings: Settings) -> Keyring | None:
    """The keyring the system log is sealed with; None where there is none to be had
    (a deployment's other checks refuse a production without keys, not a state read)."""
    try:
        return load_keyring(settings)
    except ConfigurationError:
        return None


def _folder_keys(folder: Path) -> dict[str, Ed25519PublicKey]:
    found: dict[str, Ed25519PublicKey] = {}
    for path in sorted(folder.glob("*.key")) if folder.is_dir() else []:
        seed = base64.b64decode(path.read_text())
        public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
        found[key_id(public)] = public
    return found


_DEFAULT: dict[tuple[object, ...], StateKeys] = {}


def default_keys(*, write: bool = True) -> StateKeys:
    """``state_keys`` of the environment's settings, rebuilt when its keys or witness change.

    ``write=False`` (a reader: ``versions.latest``) trusts the keys held here and
    never makes one: reading state must not leave a signing key behind.
    """
    settings = Settings()
    if not write:
        return _reader_keys(settings)
    folder = settings.signing_path
    names = tuple(sorted(os.listdir(folder))) if folder.is_dir() else ()
    secret = settings.signing_key.get_secret_value() if settings.signing_key else ""
    witness: tuple[str, ...] = (str(settings.witness_dir or ""), settings.witness_s3_bucket or "")
    witness += (str(keys_dir(settings).is_dir()), str(settings.keys_json is not None))
    marker = (str(folder), secret, names, settings.env, witness)
    if marker not in _DEFAULT:
        keys = state_keys(settings)
        _DEFAULT.clear()
        # Keyed on the folder as it is now: making a development key changes it.
        names = tuple(sorted(os.listdir(folder))) if folder.is_dir() else ()
        _DEFAULT[(str(folder), secret, names, settings.env, witness)] = keys
        return keys
    return _DEFAULT[marker]
