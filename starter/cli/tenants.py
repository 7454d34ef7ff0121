"""``custody tenants add|ls|revoke``: tenants of the HTTP edge and their API keys.

The full key is printed once, by ``add``; ``ls`` never shows it (see
:mod:`starter.edge.tenants` for how keys are kept).
"""

from __future__ import annotations

import argparse
from typing import Any

from custody.errors import Code, TenantExists
from custody.settings import Settings
from custody.stores import open_store
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command
from starter.edge.tenants import add, list_tenants, revoke


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "tenants").add_subparsers(dest="tenants_verb", required=True)
    a = verbs.add_parser("add", parents=[common], help="create a tenant; prints its key once")
    a.add_argument("name", help="the tenant's name: [a-z0-9][a-z0-9_-]{0,62}")
    a.add_argument("--priority", action="store_true", help="may use the reserved lane")
    a.set_defaults(handler=_add)
    verbs.add_parser("ls", parents=[common], help="list tenants").set_defaults(handler=_ls)
    r = verbs.add_parser("revoke", parents=[common], help="revoke a tenant's key")
    r.add_argument("name", help="the tenant whose key to revoke")
    r.set_defaults(handler=_revoke)


def _add(args: argparse.Namespace, settings: Settings) -> int:
    try:
        tenant, api_key = add(open_store(settings), args.name, priority=args.priority)
    except TenantExists:
        message = f"tenant {args.name} already exists"
        return fail(args.json, Code.TENANT_EXISTS, message, Exit.USAGE)
    data = {"tenant": tenant.name, "key_id": tenant.key_id, "api_key": api_key}
    emit(args, data, f"tenant {tenant.name}\napi key (shown once): {api_key}")
    return Exit.OK


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    rows = [
        t.model_dump(mode="json", exclude={"key_sha256"})
        for t in list_tenants(open_store(settings))
    ]
    lines = [
        f"{r['name']:<24} {r['key_id']}  {'revoked' if r['revoked_at'] else 'active'}" for r in rows
    ]
    emit(args, rows, "\n".join(lines) or "no tenants")
    return Exit.OK


def _revoke(args: argparse.Namespace, settings: Settings) -> int:
    tenant = revoke(open_store(settings), args.name)
    if tenant is None:
        return fail(args.json, Code.NOT_FOUND, f"no tenant {args.name}", Exit.NOT_FOUND)
    emit(args, {"tenant": tenant.name, "revoked_at": tenant.revoked_at}, "revoked")
    return Exit.OK
