"""CLI for the audit ledger: ``audit verify``, ``audit log``, ``audit seal``.

``audit verify`` replays each tenant's transparency log. With ``--state-file
PATH`` it is incremental (starter.evidence.verify.incremental): the file, kept
by the auditor outside the store, holds the last tree head verified per tenant,
and the run proves the newest checkpoint consistent with it, reading only what
was added; ``--json`` reports ``from_size`` and ``to_size``. Without one, or
with ``--full``, everything is re-read (starter.evidence.verify.audit): chain,
tiles, checkpoints, the witnesses, batches and the by-document index. Every
tenant is reported on its own and one that fails never stops the others.
Without ``--tenant`` it covers every tenant the store or the note archive knows
(a ledger deleted whole from the store still shows); ``--all-tenants`` says so
explicitly. Checkpoints count only when signed by a trusted key (``--trust
FPR``, else ``CUSTODY_TRUST_FPRS``, else the local signing keys:
starter.evidence.trust) and, when a quorum is set (``CUSTODY_WITNESS_QUORUM``),
cosigned by that many pinned witnesses. The state file advances only for a
tenant that passes.

``audit seal`` integrates what is sequenced and signs and has witnessed each
tenant's tree head, for appends made by a process that had no signing key (a CLI
decision, an OCR worker); it also migrates a log written before tiles.

Exit status 0 when every tenant passes, 8 (``Exit.VERIFY_FAILED``) otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from custody.errors import NotFound, UsageError
from custody.ledger.checkpoints import notary_from_settings, note_keys, open_witness
from custody.ledger.events import Ledger, scopes
from custody.ledger.signing import PublicKeyRecord, public_keys
from custody.ledger.witness import WitnessPolicy, policy_from_settings
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli.options import DOCUMENT_HELP
from starter.cli.output import Exit, emit, emit_reports
from starter.cli.registry import add_all_tenants, add_command, every_tenant
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.audit import verify_log, witnessed_scopes
from starter.evidence.verify.heads import Head, newest_head
from starter.evidence.verify.incremental import Verified, kept, verify_since
from starter.evidence.verify.report import Report


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
    verify.add_argument(
        "--state-file",
        type=Path,
        help="the last verified tree heads (kept outside the store): verify only the growth",
    )
    verify.add_argument("--full", action="store_true", help="re-read everything")
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
    anchors = TrustAnchors.from_settings(settings, args.trust)
    policy = policy_from_settings(settings)
    store, witness = open_store(settings), open_witness(settings)
    keys = anchors.trusted(public_keys(store))
    state = _read_state(args.state_file) if args.state_file else {}
    reports = []
    for tenant in _tenants(args, store, witness):
        report, head = _one(args, store, tenant, keys, witness, policy, state.get(_name(tenant)))
        reports.append(report)
        if head is not None:
            state[_name(tenant)] = head
    if args.state_file:
        _write_state(args.state_file, state)
    return emit_reports(args, reports)


def _one(
    args: argparse.Namespace,
    store: ObjectStore,
    tenant: str | None,
    keys: dict[str, PublicKeyRecord],
    witness: ObjectStore | None,
    policy: WitnessPolicy,
    last: Verified | None,
) -> tuple[Report, Verified | None]:
    """One tenant: incremental from ``last``, else (or with ``--full``) the whole log; and
    the head to keep when it passed."""
    if last is not None and not args.full:
        return verify_since(store, tenant, keys, last, witness, policy)
    report = verify_log(store, tenant, keys, witness, policy)
    if last is not None:  # --full still holds the log to what was verified before
        grown, _ = verify_since(store, tenant, keys, last, witness, policy)
        report.checks += [c for c in grown.checks if c.name == "ledger.consistency"]
        report.ok, report.from_size = all(c.ok for c in report.checks), last.size
    head = newest_head(Ledger(store, tenant), note_keys(keys), policy)
    report.to_size = head.note.size if isinstance(head, Head) else None
    return report, kept(head) if report.ok and isinstance(head, Head) else None


def _name(tenant: str | None) -> str:
    return tenant or "_"


def _read_state(path: Path) -> dict[str, Verified]:
    if not path.exists():
        return {}
    try:
        body = json.loads(path.read_text())
        return {name: Verified.model_validate(head) for name, head in body["heads"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise UsageError(detail=f"{path.name} is not an audit state file") from None


def _write_state(path: Path, state: dict[str, Verified]) -> None:
    """Atomically: a crash leaves the old state, never half of a new one."""
    body = {"heads": {name: head.model_dump() for name, head in sorted(state.items())}}
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(body, indent=2) + "\n")
    os.replace(tmp, path)


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
        ledger.seal()
        sealed[tenant or "_"] = ledger.size()
    text = "\n".join(f"{scope:<24} {size}" for scope, size in sealed.items())
    emit(args, sealed, text or "no ledgers")
    return Exit.OK
