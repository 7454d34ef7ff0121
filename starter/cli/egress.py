"""``custody egress ls|verify|identify``: which bytes left, to whom, under what policy.

All three read the object store only, so they answer months later, after
Temporal's retention dropped the workflows:

    custody egress ls [--recipient R] [--document SHA] [--policy P] [--since ISO]
    custody egress verify RELEASE_ID     exit 0 every check passes, 8 one FAILs, 5 unknown
    custody egress identify FILE         {release_id, recipient, match, by}, this tenant's only
    custody egress report --field participant_id=VALUE [--since ISO]
                                         one patient's disclosures (starter.evidence.disclosures):
                                         [{at, recipient, release_id, description, purpose}]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custody import egress as eg
from custody.errors import Code
from custody.ledger.signing import public_keys
from custody.settings import Settings
from custody.state.egress import egress_events
from custody.stores import open_store
from starter.cli.options import readable_file
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = add_command(sub, "egress")
    actions = group.add_subparsers(dest="egress_action", required=True)
    ls = actions.add_parser("ls", parents=[common], help="egress events, oldest first")
    ls.add_argument("--recipient", default=None, help="only events naming this recipient")
    ls.add_argument(
        "--document",
        default=None,
        metavar="SHA256",
        help="only events that handed out this document (8+ hex characters do)",
    )
    ls.add_argument("--policy", default=None, help="policy name or SHA-256")
    ls.add_argument("--since", default=None, metavar="ISO", help="events at or after this time")
    ls.set_defaults(handler=ls_command)
    verify = actions.add_parser("verify", parents=[common], help="replay a release's receipt")
    verify.add_argument("release_id", help="the release id `custody release` printed")
    verify.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="FPR",
        help="a trusted signing key's SHA-256 fingerprint (repeatable; default"
        " CUSTODY_TRUST_FPRS, else the local signing keys): a key only in the store proves nothing",
    )
    verify.set_defaults(handler=verify_command)
    ident = actions.add_parser("identify", parents=[common], help="which release a file is from")
    ident.add_argument("file", type=readable_file, help="the file found: PDF or image")
    ident.set_defaults(handler=identify_command)
    report = actions.add_parser("report", parents=[common], help="one patient's disclosures")
    report.add_argument(
        "--field",
        required=True,
        metavar="NAME=VALUE",
        help="the patient, by a field read (e.g. participant_id=P-00421), via the keyed index",
    )
    report.add_argument(
        "--since", default=None, metavar="ISO", help="disclosures at or after this time"
    )
    report.set_defaults(handler=report_command)


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    at = datetime.fromisoformat(value)
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _wanted(record: eg.EgressRecord, args: argparse.Namespace, since: datetime | None) -> bool:
    return (
        (args.recipient is None or record.recipient == args.recipient)
        and (args.document is None or args.document in record.documents)
        and (args.policy is None or args.policy in (record.policy, record.policy_sha256))
        and (since is None or record.at >= since)
    )


def ls_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        since = _since(args.since)
    except ValueError:
        example = "--since takes an ISO 8601 time, e.g. 2025-01-31T12:00:00+00:00"
        return fail(args.json, Code.USAGE, example, Exit.USAGE)
    records = [
        r for r in egress_events(open_store(settings), args.tenant) if _wanted(r, args, since)
    ]
    rows = [r.model_dump(mode="json") for r in records]
    lines = [f"{'at':<20} {'kind':<8} {'release':<12} {'recipient':<16} {'policy':<12} bytes"]
    lines += [
        f"{r.at:%Y-%m-%d %H:%M:%S}  {r.kind.value:<8} {(r.release_id or '-')[:12]:<12} "
        f"{r.recipient or '-':<16} {r.policy:<12} {r.bytes_sha256[:16]} {r.actor}"
        for r in records
    ]
    emit(args, rows, "\n".join(lines) if records else "no egress events")
    return Exit.OK


def report_command(args: argparse.Namespace, settings: Settings) -> int:
    from custody import field_index
    from starter.evidence.disclosures import disclosures

    name, sep, value = args.field.partition("=")
    if not sep or not name.strip() or not value:
        return fail(args.json, Code.USAGE, "--field takes NAME=VALUE", Exit.USAGE)
    try:
        since = _since(args.since)
    except ValueError:
        example = "--since takes an ISO 8601 time, e.g. 2025-01-31T12:00:00+00:00"
        return fail(args.json, Code.USAGE, example, Exit.USAGE)
    store = open_store(settings)
    if field_index.keyring_of(store) is None:
        detail = "--field needs the keyring (custody keys init): no index without"
        return fail(args.json, Code.USAGE, detail, Exit.USAGE)
    rows = disclosures(store, args.tenant, name.strip(), value, since)
    lines = [
        f"{r['at'][:19]}  {r['recipient']:<16} {(r['release_id'] or '-')[:12]:<12} "
        f"{r['purpose'] or '-':<20} {r['description']}"
        for r in rows
    ]
    emit(args, rows, "\n".join(lines) if rows else "no disclosures found")
    return Exit.OK


def _manifest_reader(settings: Settings) -> Callable[[bytes, str], str | None] | None:
    """The C2PA reader, pinned to this deployment's CA; None where no CA was ever made."""
    from activities.egress import provenance  # c2pa loads only for this check

    anchor = settings.signing_path / "c2pa" / "ca.pem"
    if not anchor.exists():
        return None
    pem = anchor.read_bytes()

    def read(data: bytes, media_type: str) -> str | None:
        reading = provenance.read_claim(data, media_type, pem)
        return reading.manifest_sha256 if reading is not None and reading.verified else None

    return read


def verify_command(args: argparse.Namespace, settings: Settings) -> int:
    from custody.ledger.checkpoints import open_witness
    from custody.ledger.witness import policy_from_settings
    from starter.evidence.trust import TrustAnchors
    from starter.evidence.verify.egress import release_exists, verify_release
    from starter.evidence.verify.proofs import LogProofs

    # Pinned keys and the witnesses first: in production, none refuses before any read.
    anchors = TrustAnchors.from_settings(settings, args.trust)
    proofs = LogProofs(open_witness(settings), policy_from_settings(settings))

    try:
        rid = eg.check_release_id(args.release_id)
    except ValueError as err:
        return fail(args.json, Code.USAGE, str(err), Exit.USAGE)
    store = open_store(settings)
    if not release_exists(store, args.tenant, rid):
        return fail(args.json, Code.NOT_FOUND, f"no release {rid} for this tenant", Exit.NOT_FOUND)
    keys = anchors.trusted(public_keys(store))
    report = verify_release(
        store, keys, args.tenant, rid, manifest_of=_manifest_reader(settings), proofs=proofs
    )
    data = {
        "ok": report.ok,
        "passed": sum(c.ok for c in report.checks),
        "failed": sum(not c.ok for c in report.checks),
        "reports": [report.model_dump()],
    }
    lines = [f"{'PASS' if report.ok else 'FAIL'}  {report.subject}"]
    lines += [f"  {'ok  ' if c.ok else 'FAIL'} {c.name} {c.detail}".rstrip() for c in report.checks]
    emit(args, data, "\n".join(lines))
    return Exit.OK if report.ok else Exit.VERIFY_FAILED


def identify_command(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli.identify import identify

    try:
        data = Path(args.file).read_bytes()
    except OSError as err:
        return fail(
            args.json, Code.NOT_FOUND, f"cannot read the file ({err.strerror})", Exit.NOT_FOUND
        )
    found = identify(open_store(settings), data, trust_anchor(settings), args.tenant)
    if found.match == "text":
        text = (
            f"the published text of a document, carried by {len(found.releases)} release(s): "
            f"{', '.join(found.releases)}; its bytes name no release of their own"
        )
    elif found.release_id:
        text = f"{found.match} (by {found.by}): release {found.release_id} to {found.recipient}"
    else:
        text = "no release of this tenant found for this file"
    emit(args, found.json(), text)
    return Exit.OK


def trust_anchor(settings: Settings) -> bytes | None:
    """This deployment's C2PA CA (PEM), the anchor a manifest must chain to; never created here."""
    ca = settings.signing_path / "c2pa" / "ca.pem"
    return ca.read_bytes() if ca.is_file() else None
