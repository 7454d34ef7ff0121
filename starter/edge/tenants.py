"""Tenants and their API keys, kept in the object store.

A key is ``cst_<key id>_<secret>``: the key id (public, 12 hex chars) finds the
record, the secret (32 random bytes) proves possession. Only the SHA-256 of the
secret is stored, and it is compared in constant time, so a leaked store does
not leak working keys. The full key is shown once, when the tenant is added.

    tenants/<name>/record/v<N>.json        the record, signed versions (custody.state.versions)
    tenants/<name>.json                    the first record: the name's claim, for listing
    tenants/<name>/revoked/<key id>.json   the key's revocation, create-only
    tenant-keys/<key id>.json              key id -> tenant name

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
from datetime import UTC, datetime

from pydantic import BaseModel

from custody import ids
from custody.errors import AuthError as AuthError
from custody.errors import TenantExists as TenantExists
from custody.state import versions
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


def _record_prefix(name: str) -> str:
    return f"tenants/{ids.check_tenant(name)}/record/"


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
    body = tenant.model_dump_json().encode()
    if not store.create(_tenant_key(name), body):
        raise TenantExists(name)
    versions.append(store, _record_prefix(name), body)
    store.create(_index_key(key_id), json.dumps({"tenant": name}).encode())
    return tenant, f"{_PREFIX}{key_id}_{secret}"


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
    if tenant is None or not hmac.compare_digest(tenant.key_sha256, _digest(secret)):
        raise AuthError()
    # get() applies the record key's marker; this key's own marker is checked as well.
    if tenant.revoked_at is not None or store.exists(_revoked_key(tenant.name, key_id)):
        raise AuthError(revoked=True)
    return tenant
