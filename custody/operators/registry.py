"""Identities as signed, chained state versions: who exists, with which roles, until when.

    operators/_/<name>.claim       the name's claim, create-only (two adds of one name race here)
    operators/_/<name>/v<N>.json   the identity's versions (custody.state.versions)

(``_``: sealed under the system's key, never a tenant's, so shredding a tenant
that shares a person's name leaves the person's identity readable.)

An identity is a name, its roles, the public half of its own Ed25519 key, when
it expires, who made it and, once revoked, when and by whom. Its versions are
signed by the deployment's signing key, so only a process holding that key can
add, change or revoke one, and an old version put back is refused
(``STATE_INVALID``); the private half never enters the store
(custody.operators.credentials).

``admin`` may do everything another role may. The first identity of a
deployment is made by :func:`bootstrap`: in development ``custody up`` calls
it, in production ``custody operators bootstrap`` does, with the deployment's
signing key at hand; every later one is added by an acting admin.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import BaseModel, ConfigDict, Field

from custody.errors import Code, IdentityRefused, UsageError
from custody.ledger.signing import key_id
from custody.state import versions
from custody.stores import ObjectStore

NAME = r"[a-z][a-z0-9._-]{0,62}"
_NAME = re.compile(NAME)
_ROOT = "operators/_/"


class Role(StrEnum):
    OPERATOR = "operator"
    REVIEWER = "reviewer"
    RELEASER = "releaser"
    AUDITOR = "auditor"
    ADMIN = "admin"


class Identity(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=f"^{NAME}$")
    roles: tuple[Role, ...]
    kid: str
    public_key: str  # base64 of the 32 raw bytes
    created_at: datetime
    expires_at: datetime
    #: The admin who added it, or ``bootstrap``.
    created_by: str
    revoked_at: datetime | None = None
    revoked_by: str | None = None

    def public(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(self.public_key))

    def may(self, role: Role) -> bool:
        return Role.ADMIN in self.roles or role in self.roles

    def refusal(self, role: Role | None, at: datetime) -> tuple[Code, str] | None:
        """Why this identity may not act as ``role`` at ``at``; None when it may."""
        if self.revoked_at is not None and self.revoked_at <= at:
            return Code.OPERATOR_REVOKED, f"identity {self.name} was revoked"
        if self.expires_at <= at:
            return Code.OPERATOR_EXPIRED, f"identity {self.name} expired"
        if role is not None and not self.may(role):
            return Code.ROLE_REQUIRED, f"identity {self.name} does not hold the role {role}"
        return None


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise UsageError(detail=f"an identity's name must match {NAME}")
    return name


def _prefix(name: str) -> str:
    return f"{_ROOT}{check_name(name)}/"


def get(store: ObjectStore, name: str) -> Identity | None:
    raw = versions.latest(store, _prefix(name))
    return None if raw is None else Identity.model_validate_json(raw)


def list_identities(store: ObjectStore) -> list[Identity]:
    names = sorted(
        k[len(_ROOT) : -len(".claim")] for k in store.list(_ROOT) if k.endswith(".claim")
    )
    return [found for name in names if (found := get(store, name)) is not None]


def add(
    store: ObjectStore,
    name: str,
    roles: list[Role],
    public: Ed25519PublicKey,
    *,
    by: str,
    days: float,
) -> Identity:
    """Register a new identity; OPERATOR_EXISTS if the name is taken (never replaced)."""
    if not roles:
        raise UsageError(detail="an identity needs at least one --role")
    now = datetime.now(UTC)
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    identity = Identity(
        name=check_name(name),
        roles=tuple(dict.fromkeys(roles)),
        kid=key_id(public),
        public_key=base64.b64encode(raw).decode(),
        created_at=now,
        expires_at=now + timedelta(days=days),
        created_by=by,
    )
    if not store.create(f"{_ROOT}{name}.claim", b"") or get(store, name) is not None:
        raise IdentityRefused(Code.OPERATOR_EXISTS, f"identity {name} already exists")
    versions.append(store, _prefix(name), identity.model_dump_json().encode())
    return identity


def bootstrap(store: ObjectStore, name: str, public: Ed25519PublicKey, *, days: float) -> Identity:
    """The deployment's first identity, an admin; refused once any identity exists."""
    if list_identities(store):
        raise IdentityRefused(Code.OPERATOR_EXISTS, "identities exist: an admin adds the next")
    return add(store, name, [Role.ADMIN], public, by="bootstrap", days=days)


def revoke(store: ObjectStore, name: str, *, by: str) -> Identity:
    """Revoke ``name`` from now on; what it signed before stays its signature."""
    identity = get(store, name)
    if identity is None:
        raise IdentityRefused(Code.OPERATOR_UNKNOWN, f"no identity {name}")
    if identity.revoked_at is not None:
        return identity
    revoked = identity.model_copy(update={"revoked_at": datetime.now(UTC), "revoked_by": by})
    versions.append(store, _prefix(name), revoked.model_dump_json().encode())
    return revoked


def known(store: ObjectStore, name: str) -> Identity:
    """The identity called ``name``; OPERATOR_UNKNOWN when there is none."""
    found = get(store, name) if _NAME.fullmatch(name) else None
    if found is None:
        raise IdentityRefused(Code.OPERATOR_UNKNOWN, "no such identity")
    return found
