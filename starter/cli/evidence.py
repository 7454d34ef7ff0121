"""CLI for compliance staff: ``verify`` and ``evidence`` (``audit`` and ``quarantine`` beside).

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
import contextlib
import json
import os
import random
import shlex
import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from custody import field_index, ids
from custody.errors import ConfigurationError, CustodyError, NotFound, UsageError
from custody.ledger.checkpoints import notary_from_settings, open_witness
from custody.ledger.events import notarize
from custody.ledger.signing import public_keys, retired_keys, rotate, signer_from_settings
from custody.ledger.witness import policy_from_settings
from custody.operators import DecisionKind, acting
from custody.operators.journal import keep
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli.actor import operator
from starter.cli.options import DOCUMENT_HELP
from starter.cli.output import Exit, emit, emit_reports
from starter.cli.registry import add_all_tenants, add_command, every_tenant
from starter.evidence import bundle as ev
from starter.evidence.trust import TrustAnchors, fingerprint, key_fingerprint
from starter.evidence.verify.document import LogProofs, published_documents


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    v = add_command(sub, "verify", parents=[common])
    v.add_argument("sha256", nargs="?", help="one document's SHA-256 (8+ hex characters do)")
    v.add_argument("--sample", type=int, default=None, help="verify N random published documents")
    v.add_argument("--all", action="store_true", help="verify every published document")
    v.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="FPR",
        help="a trusted signing key's SHA-256 fingerprint (repeatable; default CUSTODY_TRUST_FPRS,"
        " else the local signing keys): a key found only in the store is not trusted",
    )
    add_all_tenants(v)
    v.set_defaults(handler=_verify)
    evidence = add_command(sub, "evidence").add_subparsers(dest="evidence_cmd", required=True)
    show = evidence.add_parser("show", parents=[common], help="the signed record")
    show.add_argument("sha256", help=DOCUMENT_HELP)
    show.set_defaults(handler=_show)
    export = evidence.add_parser("export", parents=[common], help="a self-contained bundle")
    export.add_argument("sha256", help=DOCUMENT_HELP)
    export.add_argument(
        "-o", "--output", required=True, type=Path, help="the zip file to write, e.g. bundle.zip"
    )
    export.set_defaults(handler=_export)
    find = evidence.add_parser("find", parents=[common], help="search the evidence store")
    find.add_argument("--source-id", help="only documents the sending system gave this id")
    find.add_argument(
        "--state",
        choices=["published", "rejected", "quarantined"],
        help="only documents that ended so",
    )
    find.add_argument(
        "--since", type=datetime.fromisoformat, metavar="ISO", help="concluded at or after"
    )
    find.add_argument(
        "--until", type=datetime.fromisoformat, metavar="ISO", help="concluded before"
    )
    find.add_argument(
        "--field",
        metavar="NAME=VALUE",
        help="documents whose field reads VALUE (keyed-hash index; case and spaces ignored)",
    )
    add_all_tenants(find)
    find.set_defaults(handler=_find)
    keys = evidence.add_parser("keys", parents=[common], help="signing keys (--rotate: new key)")
    keys.add_argument(
        "--rotate", action="store_true", help="make a new signing key; older ones still verify"
    )
    keys.add_argument("--valid-days", type=float, help="with --rotate: the new key's validity")
    keys.set_defaults(handler=_keys)


def _verify(args: argparse.Namespace, settings: Settings) -> int:
    # The anchors first: in production, no pinned key refuses before anything is read.
    anchors = TrustAnchors.from_settings(settings, args.trust)
    store = open_store(settings)
    if args.sha256:
        subjects = [(args.sha256, args.tenant)]
    elif args.sample is None and not args.all:
        raise UsageError(detail="custody verify: give a SHA-256, --sample N or --all")
    else:
        subjects = published_documents(store, args.tenant, all_tenants=every_tenant(args))
        if args.sample is not None:
            subjects = random.sample(subjects, min(args.sample, len(subjects)))
    # One per run: each log's head is found, and its witnesses asked, once.
    proofs = LogProofs(open_witness(settings), policy_from_settings(settings))
    reports = [ev.verify(store, sha256, tenant, anchors, proofs) for sha256, tenant in subjects]
    return emit_reports(args, reports)


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
    with contextlib.suppress(CustodyError):  # without the signing key: no checkpoint made here
        notarize(store, notary_from_settings(settings))
    out = ev.export_bundle(store, args.sha256, args.tenant, args.output, actor=operator())
    command = verify_command(out, _pins(settings))
    emit(
        args, {"bundle": str(out), "verify": command}, f"wrote {out}; verify it with:\n  {command}"
    )
    return Exit.OK


def verify_command(bundle: Path, pins: list[str]) -> str:
    """The shell line that unpacks ``bundle`` beside itself and checks it against ``pins``.

    Printed after an export, so it must work exactly as printed: Python's own
    ``zipfile`` unpacks (no unzip needed), the interpreter is one that has
    ``cryptography``, and ``--trust`` names the keys this deployment trusts (the
    bundle's own keys are never trusted for being in it). Without a pin the
    line says where one comes from instead of pretending.
    """
    folder = bundle.with_suffix("") if bundle.suffix else bundle.with_name(bundle.name + ".d")
    py, q = _python(), shlex.quote
    trust = " ".join(f"--trust {p}" for p in pins) or "--trust FPR"
    line = f"{py} -m zipfile -e {q(str(bundle))} {q(str(folder))}"
    line += f" && {py} {q(str(folder / 'verify_bundle.py'))} {trust} {q(str(folder))}"
    return line if pins else f"{line}   # FPR: a key of `custody evidence keys`, pinned"


def _pins(settings: Settings) -> list[str]:
    """The fingerprints verification here trusts; none where none is configured."""
    try:
        return sorted(TrustAnchors.from_settings(settings).fingerprints)
    except ConfigurationError:  # production without CUSTODY_TRUST_FPRS
        return []


def _python() -> str:
    """``python3`` when that is this interpreter on PATH, else this interpreter's path."""
    found = shutil.which("python3")
    same = found is not None and os.path.abspath(found) == os.path.abspath(sys.executable)
    return "python3" if same else sys.executable


def _find(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    refs = ev.find(
        store,
        tenant=args.tenant,
        source_id=args.source_id,
        state=args.state,
        since=args.since,
        until=args.until,
        all_tenants=every_tenant(args),
    )
    if args.field is not None:
        wanted = set(_by_field(store, args))
        refs = [r for r in refs if r.sha256 in wanted and r.state == "published"]
    text = "\n".join(
        f"{r.sha256[:12]}  {r.state:<12} {r.code or '-':<16} {r.tenant or '-':<12} "
        f"{r.source_id or '-':<16} {r.at:%Y-%m-%d %H:%M:%S}"
        for r in refs
    )
    emit(args, [r.model_dump(mode="json") for r in refs], text or "nothing found")
    return Exit.OK


def _by_field(store: ObjectStore, args: argparse.Namespace) -> list[str]:
    """The tenant's documents whose field reads the value (custody.field_index)."""
    name, sep, value = args.field.partition("=")
    if not sep or not name or not value:
        raise UsageError(detail="--field takes NAME=VALUE")
    if every_tenant(args):
        raise UsageError(detail="--field searches one tenant's index: give --tenant")
    if field_index.keyring_of(store) is None:
        raise UsageError(detail="--field needs the keyring (custody keys init): no index without")
    return field_index.find(store, args.tenant, name.strip(), value)


def _keys(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    if args.rotate:  # a decision: an admin's, signed and kept in the system ledger
        person = acting(settings, store, DecisionKind.KEY_ROTATE)
        signer = rotate(settings.signing_path, valid_days=args.valid_days)
        decision = person.decide(DecisionKind.KEY_ROTATE, {"signing_key": signer.kid})
        keep(store, decision, tenant=None, subject="keys", event="key_rotated")
    else:
        signer = signer_from_settings(settings)
    signer.publish(store)
    for old in retired_keys(settings.signing_path):  # their end, so verifiers refuse later use
        old.publish(store)
    keys = public_keys(store)
    rows = [k.model_dump(mode="json") | {"fingerprint": key_fingerprint(k)} for k in keys.values()]
    data = {"active": signer.kid, "fingerprint": fingerprint(signer.public), "keys": rows}
    text = "\n".join(
        f"{'*' if k.kid == signer.kid else ' '} {key_fingerprint(k)}  {k.created_at:%Y-%m-%d %H:%M}"
        f"{f'  until {k.valid_to:%Y-%m-%d}' if k.valid_to else ''}"
        f"{'  (development)' if k.development else ''}"
        for k in keys.values()
    )
    emit(args, data, text)
    return Exit.OK
