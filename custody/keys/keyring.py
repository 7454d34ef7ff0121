"""The keyring: payload keys for Temporal and key-encryption keys for objects.

Keys live outside the repository and the object store: files in a 0700 folder
(``CUSTODY_KEYS_DIR``, default ``CUSTODY_HOME/keys``) or one JSON secret
(``CUSTODY_KEYS_JSON``) that wins over the folder. In the folder:

    payload-<kid>.key     AES-256 payload key, base64; the greatest kid is newest
    kek-<scope>.key       a tenant's key-encryption key, version 0 (scope ``_``: no tenant)
    kek-<scope>.<n>.key   version n, added by ``custody keys rotate --tenant``
    kek-<scope>.shredded  tombstone: that tenant's key was destroyed on purpose
    codec-token           bearer token of the Web UI's codec server
    DEVELOPMENT           marker: generated for a laptop, refused in production

The JSON secret has the shape ``{"payload": {kid: b64}, "kek": {scope: b64},
"codec_token": str}`` (a KEK named ``<scope>.<n>`` is version n); it cannot
grow, so each tenant's KEK must be listed.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from custody.errors import ConfigurationError
from custody.errors import TenantShredded as TenantShredded
from custody.keys.files import (
    KEY_BYTES,
    b64key,
    check_scope,
    fresh_key,
    kek_path,
    private_dir,
    read_payload_keys,
    version_of,
    write_secret,
)
from custody.keys.files import rotate as rotate
from custody.keys.files import shred as shred
from custody.settings import Settings

REFRESH_S = 60.0
_DEV_MARK = "DEVELOPMENT"
_TOKEN = "codec-token"
_REF_INFO = b"custody object reference hmac v1"


def keys_dir(settings: Settings) -> Path:
    return settings.keys_dir or settings.home / "keys"


@dataclass
class Keyring:
    # repr=False: a keyring in a log line or a traceback shows no key material.
    payload: dict[str, bytes] = field(repr=False)
    keks: dict[str, bytes] = field(default_factory=dict, repr=False)
    directory: Path | None = None  # None: the keys came from an environment secret
    development: bool = False
    codec_token: str | None = field(default=None, repr=False)
    #: Until then, unsigned object references (workflows started before
    #: references were signed) are accepted; see custody.refs.
    unsigned_refs_until: datetime | None = None
    _loaded: float = field(default_factory=time.monotonic, repr=False)

    def current(self) -> tuple[str, bytes]:
        """The newest payload key, used for every new payload.

        With key files, a running worker looks again every ``REFRESH_S``, so a
        ``custody keys rotate`` takes effect without a restart.
        """
        if self.directory is not None and time.monotonic() - self._loaded > REFRESH_S:
            self._reload(self.directory)
        kid = max(self.payload)
        return kid, self.payload[kid]

    def payload_key(self, kid: str) -> bytes:
        # Another process may have rotated since we loaded: look again once.
        if kid not in self.payload and self.directory is not None:
            self._reload(self.directory)
        if kid not in self.payload:
            raise ConfigurationError(detail=f"payload key {kid} is not in the keyring")
        return self.payload[kid]

    def ref_key(self, kid: str) -> bytes:
        """The HMAC key for object references, derived from payload key ``kid``.

        Derived (HKDF, its own label) rather than stored, so it rotates with the
        payload keys, lives wherever they live, and never doubles as a cipher key.
        """
        hkdf = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=_REF_INFO)
        return hkdf.derive(self.payload_key(kid))

    def _reload(self, directory: Path) -> None:
        # A new dict swapped in whole: threads reading the old one never see it change.
        self.payload = {**self.payload, **read_payload_keys(directory)}
        self._loaded = time.monotonic()

    def kek(self, scope: str, *, create: bool = False, version: int | None = None) -> bytes:
        """The scope's key-encryption key ``version`` (None: the newest)."""
        if version is None:
            return self.current_kek(scope, create=create)[1]
        return self._kek_version(scope, version)

    def current_kek(self, scope: str, *, create: bool = False) -> tuple[int, bytes]:
        """The scope's newest KEK and its version, which wraps every new data key.

        Version 0 is created on the first write when keys are files. Read from
        the folder each time (no cache): a shred or a ``custody keys rotate
        --tenant`` by another process takes effect at once.
        """
        versions = self.kek_versions(scope)
        if not versions:
            if not create or self.directory is None:
                raise ConfigurationError(detail=f"no key-encryption key for tenant {scope}")
            # Two writers racing: the link decides, the loser reads the winner's key.
            with contextlib.suppress(FileExistsError):
                write_secret(kek_path(self.directory, scope, 0), fresh_key())
            versions = [0]
        return versions[-1], self._kek_version(scope, versions[-1])

    def kek_versions(self, scope: str) -> list[int]:
        """The scope's KEK versions, oldest first; TENANT_SHREDDED once shredded."""
        check_scope(scope)
        if self.directory is None:
            names = [k for k in self.keks if k.partition(".")[0] == scope]
            return sorted(version_of(k) for k in names)
        if (self.directory / f"kek-{scope}.shredded").exists():
            raise TenantShredded(detail=f"tenant {scope} was crypto-shredded")
        paths = [
            *self.directory.glob(f"kek-{scope}.key"),
            *self.directory.glob(f"kek-{scope}.*.key"),
        ]
        return sorted(version_of(p.name[4:-4]) for p in paths)

    def _kek_version(self, scope: str, version: int) -> bytes:
        name = scope if version == 0 else f"{scope}.{version}"
        if self.directory is None:
            if name not in self.keks:
                raise ConfigurationError(detail=f"no key-encryption key {name}")
            return self.keks[name]
        self.kek_versions(scope)  # raises TENANT_SHREDDED first, if so
        path = kek_path(self.directory, scope, version)
        if not path.exists():
            raise ConfigurationError(detail=f"no key-encryption key {name}")
        return b64key(path.read_bytes())

    def scopes(self) -> dict[str, str]:
        """Each known scope and whether its KEK is ``active`` or ``shredded``."""
        if self.directory is None:
            return dict.fromkeys(sorted({k.partition(".")[0] for k in self.keks}), "active")
        found: dict[str, str] = {}
        for path in sorted(self.directory.glob("kek-*")):
            scope, kind = path.name[4:].partition(".")[0], path.name.rpartition(".")[2]
            found[scope] = "shredded" if kind == "shredded" else found.get(scope, "active")
        return found


def load_keyring(settings: Settings) -> Keyring | None:
    """The configured keyring; None when there is none and this is not production."""
    if settings.keys_json is not None:
        ring: Keyring | None = _from_json(settings.keys_json.get_secret_value())
    else:
        ring = _from_dir(keys_dir(settings))
    if ring is None and settings.env == "production":
        raise ConfigurationError(
            detail="no keys: set CUSTODY_KEYS_DIR or CUSTODY_KEYS_JSON (custody keys init)"
        )
    if ring is not None and ring.development and settings.env == "production":
        raise ConfigurationError(detail="development keys are refused when CUSTODY_ENV=production")
    if ring is not None:
        ring.unsigned_refs_until = settings.refs_unsigned_until
    return ring


def require_keyring(settings: Settings) -> Keyring:
    ring = load_keyring(settings)
    if ring is None:
        raise ConfigurationError(detail="no keys configured; run custody keys init")
    return ring


def ensure_dev_keyring(settings: Settings) -> Keyring:
    """The configured keyring, or a new development set (never in production)."""
    ring = load_keyring(settings)
    return ring if ring is not None else init_keyring(keys_dir(settings), development=True)


def init_keyring(directory: Path, *, development: bool) -> Keyring:
    """A new key set in ``directory``: one payload key, the no-tenant KEK, a codec token."""
    private_dir(directory)
    if read_payload_keys(directory):
        raise ConfigurationError(detail=f"{directory} already holds keys; use custody keys rotate")
    if development:
        write_secret(directory / _DEV_MARK, b"development keys: never use in production\n")
    write_secret(directory / _TOKEN, secrets.token_urlsafe(32).encode() + b"\n")
    rotate(directory)
    ring = require_dir_keyring(directory)
    ring.current_kek("_", create=True)
    return ring


def require_dir_keyring(directory: Path) -> Keyring:
    ring = _from_dir(directory)
    if ring is None:
        raise ConfigurationError(detail=f"no keys in {directory}; run custody keys init")
    return ring


def rotate_kek(directory: Path, scope: str) -> int:
    """Add a new KEK version for ``scope``: new objects are wrapped by it, older ones
    still open with the version named in their header. Returns the new version."""
    versions = require_dir_keyring(directory).kek_versions(scope)
    version = versions[-1] + 1 if versions else 0
    if version > 0xFFFF:  # the sealed header holds 16 bits of version
        raise ConfigurationError(detail=f"tenant {scope} has used every KEK version")
    write_secret(kek_path(directory, scope, version), fresh_key())
    return version


def _from_dir(directory: Path) -> Keyring | None:
    payload = read_payload_keys(directory)
    if not payload:
        return None
    if directory.stat().st_mode & 0o077:
        raise ConfigurationError(detail=f"{directory} must be mode 0700 (it holds keys)")
    token = directory / _TOKEN
    return Keyring(
        payload=payload,
        directory=directory,
        development=(directory / _DEV_MARK).exists(),
        codec_token=token.read_text().strip() if token.exists() else None,
    )


def _from_json(blob: str) -> Keyring:
    try:
        data = json.loads(blob)
        payload = {str(k): b64key(v.encode()) for k, v in data["payload"].items()}
        keks = {str(k): b64key(v.encode()) for k, v in data.get("kek", {}).items()}
    except (ValueError, KeyError, AttributeError, TypeError):
        # Never echo the secret: say only what shape was expected.
        raise ConfigurationError(detail="CUSTODY_KEYS_JSON is not a valid key set") from None
    if not payload:
        raise ConfigurationError(detail="CUSTODY_KEYS_JSON holds no payload key")
    token = data.get("codec_token")
    return Keyring(payload, keks, None, bool(data.get("development")), token)
