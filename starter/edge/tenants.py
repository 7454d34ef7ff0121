"""Tenants and their API keys, kept in the object store.

A key is ``cst_<key id>_<secret>``: the key id (public, 12 hex chars) finds the
record, the secret (32 random bytes) proves possession. Only the SHA-256 of the
secret is stored, and it is compared in constant time, so a leaked store does
not leak working keys. The full key is shown once, when the tenant is added.

    tenants/<name>/record/v<N>.json        the record, signed versions (custody.state.versions)
    tenants/<name>.json                    the first record: the name's claim, for listing
    tenants/<name>/revoked/<key id>.json   the key's revocation, create-only
    tenants/<name>/keys/<key id>/v<N>.json a key's record: its hash, scopes, revocation
                                           (signed versions; starter.edge.scopes)
    tenant-keys/<key id>.json              key id -> tenant name

A tenant may hold several keys, each with its own scopes. The first key
(``add``) has a key record too; a first key from before scopes has none and
authenticates with the scope ``legacy-all`` (refused in production by the
edge). Revoking the tenant refuses every key it holds.

Authentication reads the newest signed version of the record, so neither a
forged record (an insider's own key hash) nor an old copy put back is ever
used; a revocation is a new version, and a deleted or forged one raises
``StateInvalid``. The plain record and the marker are still written, for
edges of older releases; records from before versions (or markers) are read
while no version exists, and stay revoked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from custody import ids
from custody.errors import AuthError as AuthError
from custody.errors import NotFound, UsageError
from custody.errors import TenantExists as TenantExists
from custody.state import versions
from custody.stores import ObjectStore
from starter.edge.scopes import DEFAULT_SCOPES, MINTABLE, Scope

_PREFIX = "cst_"


class Tenant(BaseModel):
    name: str
    key_id: str
    key_sha256: str
    created_at: datetime
    revoked_at: datetime | None = None
    #: May mark documents as priority (the reserved admission lane).
    priority: bool = False
    #: The presented key's scopes, set by :func:`authenticate`; never stored.
    scopes: tuple[str, ...] = Field(default=(), exclude=True)


class ApiKey(BaseModel):
    """One of a tenant's keys: the SHA-256 of its secret and what it may do."""

    tenant: str
    key_id: str
    key_sha256: str
    scopes: tuple[Scope, ...]
    created_at: datetime
    revoked_at: datetime | None = None


def _tenant_key(name: str) -> str:
    return f"tenants/{ids.check_tenant(name)}.json"


def _record_prefix(name: str) -> str:
    return f"tenants/{ids.check_tenant(name)}/record/"


def _revoked_key(name: str, key_id: str) -> str:
    return f"tenants/{ids.check_tenant(name)}/revoked/{key_id}.json"


def _index_key(key_id: str) -> str:
    return f"tenant-keys/{key_id}.json"


def _keys_prefix(name: str) -> str:
    return f"tenants/{ids.check_tenant(name)}/keys/"


def _key_prefix(name: str, key_id: str) -> str:
    return f"{_keys_prefix(name)}{key_id}/"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def add(
    store: ObjectStore,
    name: str,
    *,
    priority: bool = False,
    scopes: Sequence[Scope] = DEFAULT_SCOPES,
) -> tuple[Tenant, str]:
    """Create a tenant with one key of ``scopes``; returns it and the key, never stored."""
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    tenant = Tenant(
        name=name,
        key_id=key_id,
        key_sha256=_digest(secret),
        created_at=datetime.now(UTC),
        priority=priority,
    )
    body = tenant.model_dump_json().encode()
    if not store.create(_tenant_key(name), body):
        raise TenantExists(name)
    versions.append(store, _record_prefix(name), body)
    _keep_key(store, name, key_id, secret, scopes)
    return tenant.model_copy(update={"scopes": tuple(scopes)}), f"{_PREFIX}{key_id}_{secret}"


def add_key(store: ObjectStore, name: str, scopes: Sequence[Scope]) -> tuple[ApiKey, str]:
    """Mint another key for tenant ``name`` with ``scopes``; the key and the secret key string."""
    if get(store, name) is None:
        raise NotFound(f"tenant {name}")
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    return _keep_key(store, name, key_id, secret, scopes), f"{_PREFIX}{key_id}_{secret}"


def _keep_key(
    store: ObjectStore, name: str, key_id: str, secret: str, scopes: Sequence[Scope]
) -> ApiKey:
    if not scopes or Scope.LEGACY_ALL in scopes:
        raise UsageError(detail=f"a key needs --scope from {', '.join(MINTABLE)}")
    key = ApiKey(
        tenant=name,
        key_id=key_id,
        key_sha256=_digest(secret),
        scopes=tuple(dict.fromkeys(scopes)),
        created_at=datetime.now(UTC),
    )
    versions.append(store, _key_prefix(name, key_id), key.model_dump_json().encode())
    store.create(_index_key(key_id), json.dumps({"tenant": name}).encode())
    return key


def get_key(store: ObjectStore, name: str, key_id: str) -> ApiKey | None:
    raw = versions.latest(store, _key_prefix(name, key_id))
    return None if raw is None else ApiKey.model_validate_json(raw)


def list_keys(store: ObjectStore, name: str) -> list[ApiKey]:
    """Every key of the tenant, the first one included (``legacy-all`` if it has no record)."""
    tenant = get(store, name)
    if tenant is None:
        raise NotFound(f"tenant {name}")
    base = _keys_prefix(name)
    kids = sorted({k[len(base) :].split("/")[0] for k in store.list(base)})
    found = [key for kid in kids if (key := get_key(store, name, kid)) is not None]
    if tenant.key_id not in kids:
        found.insert(0, _legacy(tenant))
    return found


def revoke_key(store: ObjectStore, name: str, key_id: str) -> ApiKey:
    """Revoke one of the tenant's keys from now on; the tenant and its other keys stay.

    A new version of the key's record, never the tenant's revocation marker
    (which revokes the whole tenant): a first key from before scopes gets its
    first record here, ``legacy-all`` and revoked.
    """
    key = next((k for k in list_keys(store, name) if k.key_id == key_id), None)
    if key is None:
        raise NotFound(f"key {key_id[:12]} of tenant {name}")
    if key.revoked_at is not None:
        return key
    revoked = key.model_copy(update={"revoked_at": datetime.now(UTC)})
    versions.append(store, _key_prefix(name, key_id), revoked.model_dump_json().encode())
    return revoked


def _legacy(tenant: Tenant) -> ApiKey:
    """A first key from before scopes, as a key record would describe it."""
    return ApiKey(
        tenant=tenant.name,
        key_id=tenant.key_id,
        key_sha256=tenant.key_sha256,
        scopes=(Scope.LEGACY_ALL,),
        created_at=tenant.created_at,
        revoked_at=tenant.revoked_at,
    )


def get(store: ObjectStore, name: str) -> Tenant | None:
    raw = versions.latest(store, _record_prefix(name), legacy=_tenant_key(name))
    return None if raw is None else _with_revocation(store, Tenant.model_validate_json(raw))


def _with_revocation(store: ObjectStore, tenant: Tenant) -> Tenant:
    """The record with its key's revocation marker applied, whatever the record says."""
    marker = _revoked_key(tenant.name, tenant.key_id)
    if tenant.revoked_at is not None or not store.exists(marker):
        return tenant
    at = datetime.fromisoformat(json.loads(store.get(marker))["revoked_at"])
    return tenant.model_copy(update={"revoked_at": at})


def list_tenants(store: ObjectStore) -> list[Tenant]:
    keys = [k for k in store.list("tenants/") if k.count("/") == 1]  # tenants/<name>.json
    names = [k.removeprefix("tenants/").removesuffix(".json") for k in keys]
    return [tenant for name in names if (tenant := get(store, name)) is not None]


def revoke(store: ObjectStore, name: str) -> Tenant | None:
    """Mark the tenant's key revoked; its documents stay. None if no such tenant."""
    tenant = get(store, name)
    if tenant is None:
        return None
    # Also for a record revoked before markers existed: revoking it again seals that.
    at = tenant.revoked_at or datetime.now(UTC)
    marker = json.dumps({"revoked_at": at.isoformat()}).encode()
    store.create(_revoked_key(name, tenant.key_id), marker)
    if tenant.revoked_at is None:
        tenant = tenant.model_copy(update={"revoked_at": at})
        # The record too, for edges of older releases during a rolling upgrade.
        store.put(_tenant_key(name), tenant.model_dump_json().encode())
    versions.append(store, _record_prefix(name), tenant.model_dump_json().encode())
    return tenant


def authenticate(store: ObjectStore, api_key: str) -> Tenant:
    """The tenant a key belongs to; :class:`AuthError` otherwise."""
    if not api_key.startswith(_PREFIX) or api_key.count("_") < 2:
        raise AuthError()
    key_id, secret = api_key[len(_PREFIX) :].split("_", 1)
    if len(key_id) != 12 or not all(c in "0123456789abcdef" for c in key_id):
        raise AuthError()
    index = _index_key(key_id)
    if not store.exists(index):
        raise AuthError()
    tenant = get(store, json.loads(store.get(index))["tenant"])
    if tenant is None:
        raise AuthError()
    key = get_key(store, tenant.name, key_id)
    if key is None and key_id == tenant.key_id:
        key = _legacy(tenant)
    if key is None or not hmac.compare_digest(key.key_sha256, _digest(secret)):
        raise AuthError()
    # get() applies the record key's marker (the tenant's revocation); the key's own too.
    if tenant.revoked_at is not None or key.revoked_at is not None:
        raise AuthError(revoked=True)
    if store.exists(_revoked_key(tenant.name, key_id)):
        raise AuthError(revoked=True)
    return tenant.model_copy(update={"key_id": key_id, "scopes": tuple(key.scopes)})
