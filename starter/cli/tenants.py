"""``custody tenants add|ls|revoke`` and ``custody tenants keys add|ls|revoke``.

A tenant of the HTTP edge holds one or more API keys, each with its scopes
(starter.edge.scopes). ``add`` makes the tenant and its first key (scopes
``upload`` and ``read`` unless ``--scope`` says otherwise); ``keys add`` mints
another. A full key is printed once, by the command that mints it; ``ls``
never shows one (see :mod:`starter.edge.tenants` for how keys are kept).
"""

from __future__ import annotations

import argparse
from typing import Any

from custody.errors import Code, NotFound, TenantExists
from custody.settings import Settings
from custody.stores import open_store
from starter.cli.output import Exit, emit, emit_rows, fail
from starter.cli.registry import add_command
from starter.edge.scopes import DEFAULT_SCOPES, MINTABLE, Scope
from starter.edge.tenants import ApiKey, add, add_key, list_keys, list_tenants, revoke, revoke_key


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "tenants").add_subparsers(dest="tenants_verb", required=True)
    a = verbs.add_parser("add", parents=[common], help="create a tenant; prints its key once")
    a.add_argument("name", help="the tenant's name: [a-z0-9][a-z0-9_-]{0,62}")
    a.add_argument("--priority", action="store_true", help="may use the reserved lane")
    _scopes(a, f"the first key's scopes (default: {' '.join(DEFAULT_SCOPES)})")
    a.set_defaults(handler=_add)
    verbs.add_parser("ls", parents=[common], help="list tenants").set_defaults(handler=_ls)
    r = verbs.add_parser("revoke", parents=[common], help="revoke a tenant: every key it holds")
    r.add_argument("name", help="the tenant whose key to revoke")
    r.set_defaults(handler=_revoke)
    keys = verbs.add_parser("keys", help="a tenant's API keys and their scopes")
    kv = keys.add_subparsers(dest="keys_verb", required=True)
    ka = kv.add_parser("add", parents=[common], help="mint a key; prints it once")
    ka.add_argument("tenant_name", metavar="TENANT", help=_TENANT)
    _scopes(ka, "what the key may do (repeatable; required)", required=True)
    ka.set_defaults(handler=_key_add)
    kl = kv.add_parser("ls", parents=[common], help="the tenant's keys (never the secrets)")
    kl.add_argument("tenant_name", metavar="TENANT", help=_TENANT)
    kl.set_defaults(handler=_key_ls)
    kr = kv.add_parser("revoke", parents=[common], help="revoke one key; the others stay")
    kr.add_argument("tenant_name", metavar="TENANT", help=_TENANT)
    kr.add_argument("key_id", metavar="KEY_ID", help="the key's id, as keys ls shows it")
    kr.set_defaults(handler=_key_revoke)


_TENANT = "the tenant whose keys these are"


def _scopes(parser: argparse.ArgumentParser, text: str, *, required: bool = False) -> None:
    choices = [s.value for s in MINTABLE]
    parser.add_argument("--scope", action="append", choices=choices, required=required, help=text)


def _add(args: argparse.Namespace, settings: Settings) -> int:
    scopes = [Scope(s) for s in args.scope] if args.scope else list(DEFAULT_SCOPES)
    try:
        tenant, api_key = add(
            open_store(settings), args.name, priority=args.priority, scopes=scopes
        )
    except TenantExists:
        message = f"tenant {args.name} already exists"
        return fail(args.json, Code.TENANT_EXISTS, message, Exit.USAGE)
    data: dict[str, Any] = {"tenant": tenant.name, "key_id": tenant.key_id, "api_key": api_key}
    data["scopes"] = list(tenant.scopes)
    emit(args, data, f"tenant {tenant.name}\napi key (shown once): {api_key}")
    return Exit.OK


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    rows = [
        t.model_dump(mode="json", exclude={"key_sha256"})
        for t in list_tenants(open_store(settings))
    ]
    return emit_rows(
        args,
        rows,
        lambda r: f"{r['name']:<24} {r['key_id']}  {'revoked' if r['revoked_at'] else 'active'}",
        "no tenants",
    )


def _revoke(args: argparse.Namespace, settings: Settings) -> int:
    tenant = revoke(open_store(settings), args.name)
    if tenant is None:
        return fail(args.json, Code.NOT_FOUND, f"no tenant {args.name}", Exit.NOT_FOUND)
    emit(args, {"tenant": tenant.name, "revoked_at": tenant.revoked_at}, "revoked")
    return Exit.OK


def _key_add(args: argparse.Namespace, settings: Settings) -> int:
    try:
        key, api_key = add_key(
            open_store(settings), args.tenant_name, [Scope(s) for s in args.scope]
        )
    except NotFound as err:
        return fail(args.json, Code.NOT_FOUND, f"no {err}", Exit.NOT_FOUND)
    data = {**_row(key), "api_key": api_key}
    emit(args, data, f"key {key.key_id} ({', '.join(key.scopes)})\napi key (shown once): {api_key}")
    return Exit.OK


def _key_ls(args: argparse.Namespace, settings: Settings) -> int:
    try:
        rows = [_row(k) for k in list_keys(open_store(settings), args.tenant_name)]
    except NotFound as err:
        return fail(args.json, Code.NOT_FOUND, f"no {err}", Exit.NOT_FOUND)
    lines = [f"{r['key_id']}  {r['state']:<8} {','.join(r['scopes'])}" for r in rows]
    emit(args, rows, "\n".join(lines))
    return Exit.OK


def _key_revoke(args: argparse.Namespace, settings: Settings) -> int:
    try:
        key = revoke_key(open_store(settings), args.tenant_name, args.key_id)
    except NotFound as err:
        return fail(args.json, Code.NOT_FOUND, f"no {err}", Exit.NOT_FOUND)
    emit(args, _row(key), f"key {key.key_id} revoked")
    return Exit.OK


def _row(key: ApiKey) -> dict[str, Any]:
    row = key.model_dump(mode="json", exclude={"key_sha256"})
    row["state"] = "revoked" if key.revoked_at else "active"
    return row
