"""CLI for the audit ledger: ``audit verify``, ``audit log``, ``audit seal``.

``audit verify`` replays each tenant's transparency log (starter.evidence.verify.audit):
chain, signed checkpoints, the witness and the by-document index. It reports
every tenant on its own and never stops at one that fails or cannot be read.
Without ``--tenant`` it covers every tenant the store or the witness knows (a
ledger deleted whole from the store still shows through the witness);
``--all-tenants`` says so explicitly. Checkpoints count only when signed by a
trusted key: ``--trust FPR``, else ``CUSTODY_TRUST_FPRS``, else the local
signing keys (starter.evidence.trust), never a key merely found in the store.

``audit seal`` signs and witnesses each tenant's current tree head, for appends
made by a process that had no signing key (a CLI decision, an OCR worker).

Exit status 0 when every tenant passes, 8 (``Exit.VERIFY_FAILED``) otherwise.
"""

from __future__ import annotations

import argparse
from typing import Any

from custody.errors import NotFound
from custody.ledger.checkpoints import notary_from_settings, open_witness
from custody.ledger.events import Ledger, scopes
from custody.ledger.signing import public_keys
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli.options import DOCUMENT_HELP
from starter.cli.output import Exit, emit, emit_reports
from starter.cli.registry import add_all_tenants, add_command, every_tenant
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.audit import verify_log, witnessed_scopes


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    audit = add_command(sub, "audit").add_subparsers(dest="audit_cmd", required=True)
    verify = audit.add_parser("verify", parents=[common], help="check every tenant's log")
    verify.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="FPR",
        help="a trusted signing key's SHA-256 fingerprint (repeatable)",
    )
    add_all_tenants(verify, "every tenant's log, each reported on its own (the default)")
    verify.set_defaults(handler=_verify)
    log = audit.add_parser("log", parents=[common], help="events of one document")
    log.add_argument("sha256", help=DOCUMENT_HELP)
    log.set_defaults(handler=_log)
    seal = audit.add_parser("seal", parents=[common], help="sign and witness the tree heads")
    add_all_tenants(seal, "every tenant's log (the default)")
    seal.set_defaults(handler=_seal)


def _tenants(
    args: argparse.Namespace, store: ObjectStore, witness: ObjectStore | None
) -> list[str | None]:
    if not every_tenant(args) and args.tenant:
        return [args.tenant]
    found = set(scopes(store)) | witnessed_scopes(witness)
    return sorted(found, key=lambda t: t or "")


def _verify(args: argparse.Namespace, settings: Settings) -> int:
    store, witness = open_store(settings), open_witness(settings)
    keys = TrustAnchors.from_settings(settings, args.trust).trusted(public_keys(store))
    reports = [verify_log(store, t, keys, witness) for t in _tenants(args, store, witness)]
    return emit_reports(args, reports)


def _log(args: argparse.Namespace, settings: Settings) -> int:
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


def _seal(args: argparse.Namespace, settings: Settings) -> int:
    store, notary = open_store(settings), notary_from_settings(settings)
    sealed = {}
    for tenant in _tenants(args, store, notary.witness):
        ledger = Ledger(store, tenant, notary)
        size = max(ledger.sequence_numbers(), default=0)
        if size:
            notary.seal(ledger, size)
        sealed[tenant or "_"] = size
    text = "\n".join(f"{scope:<24} {size}" for scope, size in sealed.items())
    emit(args, sealed, text or "no ledgers")
    return Exit.OK
