"""What a person keeps, and who a command acts as.

A credential is a key file holding the identity's name and the seed of its
own Ed25519 key, mode 0600 in a 0700 folder (``CUSTODY_HOME/operators/`` unless
told otherwise); a file group or world can read is refused (``KEY_PERMISSIONS``),
as signing keys are. ``CUSTODY_OPERATOR_CREDENTIAL`` names the file a command
acts with. There is no default and no fallback to the OS user: a decision
without one is refused (``OPERATOR_REQUIRED``). The file does not expire by
itself; the identity does (``expires_at``), and revoking the identity makes
the file worthless.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from custody.errors import Code, ConfigurationError, IdentityRefused
from custody.ledger.signing import key_id
from custody.operators.decisions import DecisionKind, SignedDecision, role_for, sign
from custody.operators.registry import Identity, check_name, known
from custody.settings import Settings
from custody.stores import ObjectStore

_KIND = "custody-operator-key/1"


@dataclass(frozen=True)
class Credential:
    """A key file's content: the name it claims and the private key."""

    name: str
    private: Ed25519PrivateKey

    @property
    def kid(self) -> str:
        return key_id(self.private.public_key())


@dataclass(frozen=True)
class Acting(Credential):
    """A credential the registry vouches for: the identity a command acts as.

    Being a credential, it can be checked again (``check_acting``) for another kind.
    """

    identity: Identity

    def decide(self, kind: DecisionKind, subject: dict[str, Any]) -> SignedDecision:
        """``subject`` (hashes, ids, codes) signed by this identity's own key."""
        return sign(self.private, self.name, kind, subject)


def issue(folder: Path, name: str) -> tuple[Path, Ed25519PrivateKey]:
    """A new key and its key file ``<folder>/<name>-<kid>.key``; nothing is overwritten."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    private = Ed25519PrivateKey.generate()
    seed = base64.b64encode(private.private_bytes_raw()).decode()
    body = {"kind": _KIND, "name": check_name(name), "kid": key_id(private.public_key())}
    path = folder / f"{name}-{body['kid']}.key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({**body, "seed": seed}, out)
    return path, private


def load_credential(path: Path) -> Credential:
    """The credential in ``path``; a readable-by-others or malformed file is refused."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        raise IdentityRefused(Code.OPERATOR_UNKNOWN, f"no credential at {path}") from None
    if mode & 0o077:
        raise ConfigurationError(
            Code.KEY_PERMISSIONS, f"{path.name} is readable beyond its owner (need 0600)"
        )
    return _credential(data, path.name)


def parse_credential(text: bytes) -> Credential:
    """A key file's content as presented over HTTP (the review page's sign-in, the
    review API's header); anything else is OPERATOR_UNKNOWN, never a traceback."""
    try:
        return _credential(json.loads(text), "the credential")
    except (ValueError, TypeError, KeyError):
        raise IdentityRefused(Code.OPERATOR_UNKNOWN, "not a Custody credential") from None


def _credential(data: Any, label: str) -> Credential:
    if not isinstance(data, dict) or data.get("kind") != _KIND:
        raise IdentityRefused(Code.OPERATOR_UNKNOWN, f"{label} is not a Custody credential")
    private = Ed25519PrivateKey.from_private_bytes(base64.b64decode(data["seed"]))
    return Credential(name=str(data["name"]), private=private)


def acting(settings: Settings, store: ObjectStore, kind: DecisionKind) -> Acting:
    """Who this command acts as for a ``kind`` decision, or why it may not act.

    The identity must exist, hold the key in the credential, be neither revoked
    nor expired, and hold the role ``kind`` needs.
    """
    path = settings.operator_credential
    if path is None:
        raise IdentityRefused(
            Code.OPERATOR_REQUIRED,
            "a decision needs an identity: set CUSTODY_OPERATOR_CREDENTIAL to your key file",
        )
    return check_acting(store, load_credential(path), kind)


def check_acting(store: ObjectStore, credential: Credential, kind: DecisionKind) -> Acting:
    """``credential``'s identity if it may make a ``kind`` decision now; else IdentityRefused."""
    identity = known(store, credential.name)
    if identity.kid != credential.kid:
        raise IdentityRefused(Code.OPERATOR_UNKNOWN, f"the key is not {identity.name}'s")
    why = identity.refusal(role_for(kind), datetime.now(UTC))
    if why is not None:
        raise IdentityRefused(*why)
    return Acting(name=credential.name, private=credential.private, identity=identity)
