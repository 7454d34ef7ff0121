"""CLI for compliance staff: ``verify``, ``audit`` and ``evidence`` (``quarantine`` beside).

Exit status 0 when everything checked passes, 8 (``Exit.VERIFY_FAILED``) when a
verification FAILs, 5 when the document is unknown.

Tenant scope: every command reads one tenant's documents, ``--tenant T`` (none
given: documents submitted without a tenant). Listing across tenants
(``verify --all/--sample``, ``evidence find``, ``quarantine ls``) needs
``--all-tenants``, and ``--tenant`` with ``--all-tenants`` is refused. This
guards an operator against mistakes; it is not an authorisation boundary (a
process holding the keyring can open every tenant's objects): the HTTP edge,
with a bearer token per tenant, is.
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from custody import ids
from custody.errors import NotFound, UsageError
from custody.ledger import Ledger, scopes
from custody.settings import Settings
from custody.signing import public_keys, rotate, signer_from_settings
from custody.stores import ObjectStore, open_store
from custody.verification import Report, verify_ledger
from starter.cli.actor import operator
from starter.cli.output import Exit, emit
from starter.cli.registry import add_all_tenants, add_command, every_tenant
from starter.evidence import bundle as ev


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    v = add_command(sub, "verify", parents=[common])
    v.add_argument("sha256", nargs="?")
    v.add_argument("--sample", type=int, default=None, help="verify N random published documents")
    v.add_argument("--all", action="store_true", help="verify every published document")
    v.add_argument("--by", default=os.environ.get("USER", "operator"), help="who verifies")
    add_all_tenants(v)
    v.set_defaults(handler=_verify)
    audit = add_command(sub, "audit").add_subparsers(dest="audit_cmd", required=True)
    audit.add_parser("verify", parents=[common], help="check the whole ledger").set_defaults(
        handler=_audit_verify
    )
    log = audit.add_parser("log", parents=[common], help="events of one document")
    log.add_argument("sha256")
    log.set_defaults(handler=_audit_log)
    evidence = add_command(sub, "evidence").add_subparsers(dest="evidence_cmd", required=True)
    show = evidence.add_parser("show", parents=[common], help="the signed record")
    show.add_argument("sha256")
    show.set_defaults(handler=_show)
    export = evidence.add_parser("export", parents=[common], help="a self-contained bundle")
    export.add_argument("sha256")
    export.add_argument("-o", "--output", required=True, type=Path)
    export.set_defaults(handler=_export)
    find = evidence.add_parser("find", parents=[common], help="search the evidence store")
    find.add_argument("--source-id")
    find.add_argument("--state", choices=["published", "rejected", "quarantined"])
    find.add_argument("--since", type=datetime.fromisoformat)
    find.add_argument("--until", type=datetime.fromisoformat)
    add_all_tenants(find)
    find.set_defaults(handler=_find)
    keys = evidence.add_parser("keys", parents=[common], help="signing keys (--rotate: new key)")
    keys.add_argument("--rotate", action="store_true")
    keys.set_defaults(handler=_keys)


def _print_report(args: argparse.Namespace, reports: list[Report]) -> int:
    ok = all(r.ok for r in reports)
    data = {
        "ok": ok,
        "passed": sum(r.ok for r in reports),
        "failed": sum(not r.ok for r in reports),
        "reports": [r.model_dump() for r in reports],
    }
    lines = []
    for r in reports:
        lines.append(f"{'PASS' if r.ok else 'FAIL'}  {r.subject}")
        lines += [f"  {'ok  ' if c.ok else 'FAIL'} {c.name} {c.detail}".rstrip() for c in r.checks]
    lines.append(f"{data['passed']} passed, {data['failed']} failed")
    emit(args, data, "\n".join(lines))
    return Exit.OK if ok else Exit.VERIFY_FAILED


def _verify(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    if args.sha256:
        refs = [
            ev.DocumentRef(
                sha256=args.sha256, tenant=args.tenant, state="?", at=datetime.now(), run_id=""
            )
        ]
    else:
        refs = ev.published(store, args.tenant, all_tenants=every_tenant(args))
        if args.sample is not None:
            refs = ev.sample(refs, args.sample)
        elif not args.all:
            raise UsageError(detail="custody verify: give a SHA-256, --sample N or --all")
    reports = [ev.verify_and_record(store, r.sha256, r.tenant, args.by) for r in refs]
    return _print_report(args, reports)


def _audit_verify(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    keys = public_keys(store)
    chosen = [args.tenant] if args.tenant else scopes(store)
    return _print_report(args, [verify_ledger(store, keys, t) for t in chosen])


def _audit_log(args: argparse.Namespace, settings: Settings) -> int:
    events = Ledger(open_store(settings), args.tenant).for_document(args.sha256)
    if not events:
        raise NotFound(args.sha256)
    data = [e.model_dump(mode="json") for e in events]
    text = "\n".join(
        f"{e.seq:>8}  {e.at:%Y-%m-%d %H:%M:%S}  {e.kind:<20} {e.code or '-':<16} {e.actor or '-'}"
        for e in events
    )
    emit(args, data, text)
    return Exit.OK


def _signed(store: ObjectStore, sha256: str, tenant: str | None) -> bytes:
    key = ids.record_key(sha256, tenant)
    if not store.exists(key):
        raise NotFound(sha256)
    return store.get(key)


def _show(args: argparse.Namespace, settings: Settings) -> int:
    data = json.loads(_signed(open_store(settings), args.sha256, args.tenant))
    emit(args, data, json.dumps(data, indent=2))
    return Exit.OK


def _export(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    _signed(store, args.sha256, args.tenant)
    out = ev.export_bundle(store, args.sha256, args.tenant, args.output, actor=operator())
    emit(
        args,
        {"bundle": str(out)},
        f"wrote {out}; verify with: unzip, then python verify_bundle.py DIR",
    )
    return Exit.OK


def _find(args: argparse.Namespace, settings: Settings) -> int:
    refs = ev.find(
        open_store(settings),
        tenant=args.tenant,
        source_id=args.source_id,
        state=args.state,
        since=args.since,
        until=args.until,
        all_tenants=every_tenant(args),
    )
    text = "\n".join(
        f"{r.sha256[:12]}  {r.state:<12} {r.code or '-':<16} {r.tenant or '-':<12} "
        f"{r.source_id or '-':<16} {r.at:%Y-%m-%d %H:%M:%S}"
        for r in refs
    )
    emit(args, [r.model_dump(mode="json") for r in refs], text or "nothing found")
    return Exit.OK


def _keys(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    signer = rotate(settings.signing_path) if args.rotate else signer_from_settings(settings)
    signer.publish(store)
    keys = public_keys(store)
    data = {"active": signer.kid, "keys": [k.model_dump(mode="json") for k in keys.values()]}
    text = "\n".join(
        f"{'*' if k.kid == signer.kid else ' '} {k.kid}  {k.created_at:%Y-%m-%d %H:%M}"
        f"{'  (development)' if k.development else ''}"
        for k in keys.values()
    )
    emit(args, data, text)
    return Exit.OK
