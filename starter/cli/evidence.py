"""CLI for compliance staff: ``verify``, ``audit``, ``evidence`` and ``quarantine``.

Exit status 0 when everything checked passes, 8 when a verification FAILs,
5 when the document is unknown.

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
import asyncio
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from custody import ids
from custody.ledger import Ledger, scopes
from custody.models import DocumentInput
from custody.refs import RefKeys
from custody.settings import Settings
from custody.signing import public_keys, rotate, signer_from_settings
from custody.stores import ObjectStore, open_store
from custody.verification import Report, verify_ledger
from starter.client.submit import CustodyClient, NotFound, _search_attributes, _summary
from starter.evidence import bundle as ev
from workflows.document import DocumentWorkflow

EXIT_FAIL = 8


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    v = sub.add_parser("verify", parents=[common], help="replay-verify published documents")
    v.add_argument("sha256", nargs="?")
    v.add_argument("--sample", type=int, default=None, help="verify N random published documents")
    v.add_argument("--all", action="store_true", help="verify every published document")
    v.add_argument("--by", default=os.environ.get("USER", "operator"), help="who verifies")
    _all_tenants(v)
    v.set_defaults(handler=_verify)
    audit = sub.add_parser("audit", help="the audit ledger").add_subparsers(
        dest="audit_cmd", required=True
    )
    audit.add_parser("verify", parents=[common], help="check the whole ledger").set_defaults(
        handler=_audit_verify
    )
    log = audit.add_parser("log", parents=[common], help="events of one document")
    log.add_argument("sha256")
    log.set_defaults(handler=_audit_log)
    evidence = sub.add_parser("evidence", help="signed records and bundles").add_subparsers(
        dest="evidence_cmd", required=True
    )
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
    _all_tenants(find)
    find.set_defaults(handler=_find)
    keys = evidence.add_parser("keys", parents=[common], help="signing keys (--rotate: new key)")
    keys.add_argument("--rotate", action="store_true")
    keys.set_defaults(handler=_keys)
    _register_quarantine(sub, common)


def _register_quarantine(sub: Any, common: argparse.ArgumentParser) -> None:
    q = sub.add_parser("quarantine", help="review quarantined documents").add_subparsers(
        dest="quarantine_cmd", required=True
    )
    q_ls = q.add_parser("ls", parents=[common], help="documents awaiting review")
    _all_tenants(q_ls)
    q_ls.set_defaults(handler=_q_ls)
    for action, text in (("release", "run it again"), ("reject", "final: never published")):
        p = q.add_parser(action, parents=[common], help=text)
        p.add_argument("sha256")
        p.add_argument("--by", required=True, help="who decides")
        p.add_argument("--reason", required=True)
        p.set_defaults(handler=_q_release if action == "release" else _q_reject)


def _all_tenants(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all-tenants", action="store_true", help="every tenant's documents (operators only)"
    )


def _scope(args: argparse.Namespace) -> bool:
    """Whether this listing spans every tenant; refuses a contradictory request."""
    every = bool(getattr(args, "all_tenants", False))
    if every and args.tenant:
        raise SystemExit("custody: give --tenant T or --all-tenants, not both")
    return every


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, default=str, indent=2) if args.json else text)


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
    _emit(args, data, "\n".join(lines))
    return 0 if ok else EXIT_FAIL


def _verify(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    if args.sha256:
        refs = [
            ev.DocumentRef(
                sha256=args.sha256, tenant=args.tenant, state="?", at=datetime.now(), run_id=""
            )
        ]
    else:
        refs = ev.published(store, args.tenant, all_tenants=_scope(args))
        if args.sample is not None:
            refs = ev.sample(refs, args.sample)
        elif not args.all:
            raise SystemExit("custody verify: give a SHA-256, --sample N or --all")
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
    _emit(args, data, text)
    return 0


def _signed(store: ObjectStore, sha256: str, tenant: str | None) -> bytes:
    key = ids.record_key(sha256, tenant)
    if not store.exists(key):
        raise NotFound(sha256)
    return store.get(key)


def _show(args: argparse.Namespace, settings: Settings) -> int:
    data = json.loads(_signed(open_store(settings), args.sha256, args.tenant))
    _emit(args, data, json.dumps(data, indent=2))
    return 0


def _export(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    _signed(store, args.sha256, args.tenant)
    out = ev.export_bundle(store, args.sha256, args.tenant, args.output)
    _emit(
        args,
        {"bundle": str(out)},
        f"wrote {out}; verify with: unzip, then python verify_bundle.py DIR",
    )
    return 0


def _find(args: argparse.Namespace, settings: Settings) -> int:
    refs = ev.find(
        open_store(settings),
        tenant=args.tenant,
        source_id=args.source_id,
        state=args.state,
        since=args.since,
        until=args.until,
        all_tenants=_scope(args),
    )
    text = "\n".join(
        f"{r.sha256[:12]}  {r.state:<12} {r.code or '-':<16} {r.tenant or '-':<12} "
        f"{r.source_id or '-':<16} {r.at:%Y-%m-%d %H:%M:%S}"
        for r in refs
    )
    _emit(args, [r.model_dump(mode="json") for r in refs], text or "nothing found")
    return 0


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
    _emit(args, data, text)
    return 0


def _q_ls(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    refs = [
        r
        for r in ev.find(store, tenant=args.tenant, state="quarantined", all_tenants=_scope(args))
        if ev.final_decision(store, r.sha256, r.tenant) != "reject"
    ]
    text = "\n".join(
        f"{r.sha256}  {r.code:<18} {r.tenant or '-':<12} {r.at:%Y-%m-%d %H:%M:%S}" for r in refs
    )
    _emit(args, [r.model_dump(mode="json") for r in refs], text or "no documents in quarantine")
    return 0


def _quarantined(store: ObjectStore, sha256: str, tenant: str | None) -> ev.DocumentRef:
    for ref in ev.concluded(store, tenant):
        if (
            ref.sha256 == sha256
            and ref.state == "quarantined"
            and not store.exists(ids.record_key(sha256, tenant))
        ):
            return ref
    raise NotFound(f"{sha256} (not in quarantine)")


def _q_reject(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    _quarantined(store, args.sha256, args.tenant)
    key = ev.decide(store, args.sha256, args.tenant, "reject", args.by, args.reason)
    _emit(args, {"decision": key}, f"rejected for good; recorded at {key}")
    return 0


def _q_release(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    ref = _quarantined(store, args.sha256, args.tenant)
    key = ev.decide(store, args.sha256, args.tenant, "release", args.by, args.reason)
    run_id = asyncio.run(_rerun(settings, ref))
    _emit(args, {"decision": key, "run_id": run_id}, f"released; running again as run {run_id}")
    return 0


async def _rerun(settings: Settings, ref: ev.DocumentRef) -> str:
    """Start the document again under the same ID: an explicit, recorded operator action."""
    client = await CustodyClient.connect(settings)
    source = ids.source_key(ref.sha256, ref.tenant)
    kept = source if client.store.exists(source) else ids.intake_key(ref.sha256, ref.tenant)
    intake = ids.intake_key(ref.sha256, ref.tenant)
    inp = DocumentInput(
        sha256=ref.sha256,
        tenant=ref.tenant,
        source_id=ref.source_id,
        intake_key=intake,
        intake_sig=RefKeys.for_store(client.store).sign(intake, ref.tenant, ref.sha256),
        size_bytes=client.store.size(kept),
        submitted_at=datetime.now().astimezone(),
        io_task_queue=settings.io_task_queue,
        ocr_task_queue=settings.ocr_task_queue,
    )
    handle = await client.temporal.start_workflow(
        DocumentWorkflow.run,
        inp,
        id=ids.workflow_id(ref.sha256, ref.tenant),
        task_queue=settings.io_task_queue,
        # Release is the one deliberate exception to "a closed run is the answer".
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
        search_attributes=_search_attributes(inp),
        static_summary=_summary(inp),
    )
    return handle.result_run_id or ""
