"""``custody recipients add|ls|revoke``: who a tenant may release documents to.

A recipient is a name and one channel: ``--outbox DIR`` (development),
``--s3 s3://bucket/prefix --s3-credentials REF`` or ``--https URL``.
Registrations are create-only and a revocation is a signed version
(``custody.state.egress``), so neither can be undone by rewriting a file.

The channel is checked when it is registered, as delivery checks it again
(``activities.egress.reach``): never Custody's own bucket or folders
(``RECIPIENT_BUCKET_RESERVED``), never a private, link-local, CGNAT or other
non-public address, nor loopback or plain HTTP in production
(``RECIPIENT_ADDRESS_REFUSED``). An S3 recipient writes with credentials of
its own, named by ``REF`` (``env:NAME`` or ``file:/PATH``: never the secret
itself; ``activities.egress.s3_access``); without one it is refused
(``RECIPIENT_CREDENTIALS_MISSING``) except in development against a local endpoint.
"""

from __future__ import annotations

import argparse
import getpass
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custody import egress as eg
from custody.errors import Code, DeliveryFailed, EgressRefused
from custody.settings import Settings
from custody.state.egress import add_recipient, get_recipient, list_recipients, revoke_recipient
from custody.stores import open_store
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command


def operator() -> str:
    """Who runs this command: the OS user at this host. Never a secret."""
    return f"{getpass.getuser()}@{socket.gethostname()}"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = add_command(sub, "recipients")
    actions = group.add_subparsers(dest="recipients_action", required=True)
    add = actions.add_parser("add", parents=[common], help="register a recipient and its channel")
    add.add_argument("name", help="the recipient's name, as `release --to` gives it")
    channel = add.add_mutually_exclusive_group(required=True)
    channel.add_argument("--outbox", metavar="DIR", help="a local directory (development)")
    channel.add_argument("--s3", metavar="URL", help="s3://bucket/prefix")
    channel.add_argument("--https", metavar="URL", help="an HTTPS endpoint")
    add.add_argument(
        "--s3-credentials",
        metavar="REF",
        default=None,
        help="with --s3: the recipient's own keys or role, env:NAME or file:/PATH",
    )
    add.set_defaults(handler=_add)
    ls = actions.add_parser("ls", parents=[common], help="registered recipients")
    ls.set_defaults(handler=_ls)
    revoke = actions.add_parser("revoke", parents=[common], help="no further releases to it")
    revoke.add_argument("name", help="the recipient's name")
    revoke.set_defaults(handler=_revoke)


def _channel(args: argparse.Namespace) -> tuple[str, str]:
    if args.outbox is not None:
        return "outbox", str(Path(args.outbox).expanduser().resolve())
    if args.s3 is not None:
        return "s3", args.s3
    return "https", args.https


def _add(args: argparse.Namespace, settings: Settings) -> int:
    kind, target = _channel(args)
    if args.s3_credentials is not None and kind != "s3":
        return fail(args.json, Code.USAGE, "--s3-credentials goes with --s3", Exit.USAGE)
    try:
        recipient = eg.Recipient(
            name=eg.check_name(args.name, "recipient name"),
            tenant=args.tenant,
            kind=eg.ChannelKind(kind),
            target=target,
            created_at=datetime.now(UTC),
            created_by=operator(),
            credentials=args.s3_credentials,
        )
        _reachable(recipient, settings)
    except DeliveryFailed as err:
        return fail(args.json, Code.CHANNEL_INVALID, err.detail, Exit.USAGE)
    except EgressRefused as err:
        return fail(args.json, err.code, err.detail, Exit.REJECTED)
    except ValueError as err:
        return fail(args.json, Code.USAGE, _first_error(err), Exit.USAGE)
    store = open_store(settings)
    created = add_recipient(store, recipient)
    if not created:
        existing = get_recipient(store, args.tenant, recipient.name, allow_revoked=True)
        if (existing.kind, existing.target) != (recipient.kind, recipient.target):
            taken = f"{recipient.name} is already registered with another channel"
            return fail(args.json, Code.USAGE, taken, Exit.USAGE)
        recipient = existing  # the same registration again: nothing to do
    row = recipient.model_dump(mode="json") | {"created": created}
    emit(args, row, f"recipient {recipient.name}: {kind} {target}")
    return Exit.OK


def _reachable(recipient: eg.Recipient, settings: Settings) -> None:
    """The channel's form, then whether this deployment may reach it (its name resolved)."""
    from activities.egress.channels import RecipientChannel
    from activities.egress.reach import Reach
    from activities.egress.s3_access import required

    spec = RecipientChannel.of(recipient.kind.value, recipient.target)
    Reach.of(settings).check(spec, resolve_names=True)
    if recipient.kind is eg.ChannelKind.S3:
        required(recipient.credentials, settings)


def _first_error(err: ValueError) -> str:
    """A validation error's own message, without pydantic's echo of the input."""
    errors = getattr(err, "errors", None)
    if callable(errors):
        return str(errors()[0]["msg"]).removeprefix("Value error, ")
    return str(err).splitlines()[0]


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    rows = list_recipients(open_store(settings), args.tenant)
    lines = [f"{'name':<24} {'kind':<7} {'revoked':<8} target"]
    lines += [f"{r['name']:<24} {r['kind']:<7} {r['revoked']!s:<8} {r['target']}" for r in rows]
    emit(args, rows, "\n".join(lines) if rows else "no recipients")
    return Exit.OK


def _revoke(args: argparse.Namespace, settings: Settings) -> int:
    try:
        fresh = revoke_recipient(open_store(settings), args.tenant, args.name, by=operator())
    except EgressRefused as err:
        return fail(args.json, err.code, err.detail, Exit.NOT_FOUND)
    except ValueError as err:
        return fail(args.json, Code.USAGE, str(err), Exit.USAGE)
    info = {"name": args.name, "revoked": True, "already_revoked": not fresh}
    emit(args, info, f"recipient {args.name} revoked" + ("" if fresh else " (already)"))
    return Exit.OK
