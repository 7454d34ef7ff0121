"""Tenants and their API keys, kept in the object store.

A key is ``cst_<key id>_<secret>``: the key id (public, 12 hex chars) finds the
record, the secret (32 random bytes) proves possession. Only the SHA-256 of the
secret is stored, and it is compared in constant time, so a leaked store does
not leak working keys. The full key is shown once, when the tenant is added.

    tenants/<name>.json                    the tenant record (hash, never the key)
    tenants/<name>/revoked/<key id>.json   the key's revocation, create-only
    tenant-keys/<key id>.json              key id -> tenant name

A revocation is its own create-only marker, never a field rewritten in the
record: putting back an old copy of ``tenants/<name>.json`` cannot un-revoke a
key. Records revoked before markers existed (``revoked_at`` set) stay revoked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime

from pydantic import BaseModel

from custody import ids
from custody.errors import AuthError as AuthError
from custody.errors import TenantExists as TenantExists
from custody.stores import ObjectStore

_PREFIX = "cst_"


class Tenant(BaseModel):
    name: str
    key_id: str
    key_sha256: str
    created_at: datetime
    revoked_at: datetime | None = None
    #: May mark documents as priority (the reserved admission lane).
    priority: bool = False


def _tenant_key(name: str) -> str:
    return f"tenants/{ids.check_tenant(name)}.json"


def _revoked_key(name: str, key_id: str) -> str:
    return f"tenants/{ids.check_tenant(name)}/revoked/{key_id}.json"


def _index_key(key_id: str) -> str:
    return f"tenant-keys/{key_id}.json"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def add(store: ObjectStore, name: str, *, priority: bool = False) -> tuple[Tenant, str]:
    """Create a tenant; returns it and its API key, which is never stored."""
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    tenant = Tenant(
        name=name,
        key_id=key_id,
        key_sha256=_digest(secret),
        created_at=datetime.now(UTC),
        priority=priority,
    )
    if not store.create(_tenant_key(name), tenant.model_dump_json().encode()):
        raise TenantExists(name)
    store.create(_index_key(key_id), json.dumps({"tenant": name}).encode())
    return tenant, f"{_PREFIX}{key_id}_{secret}"


def get(store: ObjectStore, name: str) -> Tenant | None:
    key = _tenant_key(name)
    if not store.exists(key):
        return None
    return _with_revocation(store, Tenant.model_validate_json(store.get(key)))


def _with_revocation(store: ObjectStore, tenant: Tenant) -> Tenant:
    """The record with its key's revocation marker applied, whatever the record says."""
    marker = _revoked_key(tenant.name, tenant.key_id)
    if tenant.revoked_at is not None or not store.exists(marker):
        return tenant
    at = datetime.fromisoformat(json.loads(store.get(marker))["revoked_at"])
    return tenant.model_copy(update={"revoked_at": at})


def list_tenants(store: ObjectStore) -> list[Tenant]:
    records = [k for k in store.list("tenants/") if k.count("/") == 1]  # not the markers
    return [_with_revocation(store, Tenant.model_validate_json(store.get(k))) for k in records]


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
    if tenant is None or not hmac.compare_digest(tenant.key_sha256, _digest(secret)):
        raise AuthError()
    # get() applies the record key's marker; this key's own marker is checked as well.
    if tenant.revoked_at is not None or store.exists(_revoked_key(tenant.name, key_id)):
        raise AuthError(revoked=True)
    return tenant
