"""Tenants and their API keys, kept in the object store.

A key is ``cst_<key id>_<secret>``: the key id (public, 12 hex chars) finds the
record, the secret (32 random bytes) proves possession. Only the SHA-256 of the
secret is stored, and it is compared in constant time, so a leaked store does
not leak working keys. The full key is shown once, when the tenant is added.

    tenants/<name>.json         the tenant record (hash, never the key)
    tenant-keys/<key id>.json   key id -> tenant name
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from custody import ids
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli import documents as commands

_PREFIX = "cst_"


class Tenant(BaseModel):
    name: str
    key_id: str
    key_sha256: str
    created_at: datetime
    revoked_at: datetime | None = None
    #: May mark documents as priority (the reserved admission lane).
    priority: bool = False


class AuthError(Exception):
    """A missing, malformed or unknown key (``revoked`` False) or a revoked one."""

    def __init__(self, revoked: bool = False) -> None:
        self.revoked = revoked
        super().__init__("revoked" if revoked else "invalid")


class TenantExists(ValueError):
    """A tenant of that name already exists."""


def _tenant_key(name: str) -> str:
    return f"tenants/{ids.check_tenant(name)}.json"


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
    return Tenant.model_validate_json(store.get(key))


def list_tenants(store: ObjectStore) -> list[Tenant]:
    return [Tenant.model_validate_json(store.get(k)) for k in store.list("tenants/")]


def revoke(store: ObjectStore, name: str) -> Tenant | None:
    """Mark the tenant's key revoked; its documents stay. None if no such tenant."""
    tenant = get(store, name)
    if tenant is None:
        return None
    if tenant.revoked_at is None:
        tenant = tenant.model_copy(update={"revoked_at": datetime.now(UTC)})
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
    if tenant.revoked_at is not None:
        raise AuthError(revoked=True)
    return tenant


# ---- CLI: custody tenants add|ls|revoke ---------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("tenants", help="tenants and their API keys")
    verbs = p.add_subparsers(dest="tenants_verb", required=True)
    a = verbs.add_parser("add", parents=[common], help="create a tenant; prints its key once")
    a.add_argument("name")
    a.add_argument("--priority", action="store_true", help="may use the reserved lane")
    a.set_defaults(handler=_add)
    verbs.add_parser("ls", parents=[common], help="list tenants").set_defaults(handler=_ls)
    r = verbs.add_parser("revoke", parents=[common], help="revoke a tenant's key")
    r.add_argument("name")
    r.set_defaults(handler=_revoke)


def _add(args: argparse.Namespace, settings: Settings) -> int:
    try:
        tenant, api_key = add(open_store(settings), args.name, priority=args.priority)
    except TenantExists:
        commands.error(args, "TENANT_EXISTS", f"tenant {args.name} already exists")
        return 2
    data = {"tenant": tenant.name, "key_id": tenant.key_id, "api_key": api_key}
    commands.emit(args, data, f"tenant {tenant.name}\napi key (shown once): {api_key}")
    return 0


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    rows = [
        t.model_dump(mode="json", exclude={"key_sha256"})
        for t in list_tenants(open_store(settings))
    ]
    lines = [
        f"{r['name']:<24} {r['key_id']}  {'revoked' if r['revoked_at'] else 'active'}" for r in rows
    ]
    commands.emit(args, rows, "\n".join(lines) or "no tenants")
    return 0


def _revoke(args: argparse.Namespace, settings: Settings) -> int:
    tenant = revoke(open_store(settings), args.name)
    if tenant is None:
        commands.error(args, "NOT_FOUND", f"no tenant {args.name}")
        return 5
    commands.emit(args, {"tenant": tenant.name, "revoked_at": tenant.revoked_at}, "revoked")
    return 0
