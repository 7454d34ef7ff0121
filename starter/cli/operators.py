"""``custody operators add|ls|revoke|bootstrap``: the people who decide, by name.

``add NAME --role ROLE...`` makes an identity with a key of its own and prints
``name`` and ``credential``: the path of the key file the person keeps and
names in ``CUSTODY_OPERATOR_CREDENTIAL``. Adding and revoking are decisions
of an acting ``admin``, signed by the admin's key and kept in the system
ledger. ``bootstrap NAME`` makes a deployment's first admin, only while no
identity exists; it needs the deployment's signing key (its versions are
signed with it), so in production it runs where that key is (``custody up``
does it in development).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from custody import operators as ops
from custody.ledger.signing import signer_from_settings
from custody.operators import DecisionKind, Role
from custody.operators.journal import keep
from custody.operators.registry import check_name
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli.output import Exit, emit, emit_rows
from starter.cli.registry import add_command

_ROLES = [r.value for r in Role]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "operators").add_subparsers(dest="operators_verb", required=True)
    a = verbs.add_parser("add", parents=[common], help="a new identity and its key file")
    _name_and_out(a)
    a.add_argument("--role", action="append", required=True, choices=_ROLES, help="repeatable")
    a.add_argument("--days", type=float, default=None, help="valid for (CUSTODY_OPERATOR_DAYS)")
    a.set_defaults(handler=_add)
    verbs.add_parser("ls", parents=[common], help="every identity").set_defaults(handler=_ls)
    r = verbs.add_parser("revoke", parents=[common], help="revoke an identity from now on")
    r.add_argument("name", help="the identity to revoke")
    r.set_defaults(handler=_revoke)
    b = verbs.add_parser("bootstrap", parents=[common], help="the first admin (no identity yet)")
    _name_and_out(b)
    b.set_defaults(handler=_bootstrap)


def _name_and_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the person's name: [a-z][a-z0-9._-]{0,62}")
    parser.add_argument("--out", type=Path, default=None, help="folder for the key file")


def _folder(args: argparse.Namespace, settings: Settings) -> Path:
    return args.out or settings.home / "operators"


def _add(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    admin = ops.acting(settings, store, DecisionKind.OPERATOR_ADD)
    path, private = ops.issue(_folder(args, settings), check_name(args.name))
    days = args.days or settings.operator_days
    roles = [Role(r) for r in args.role]
    made = ops.add(store, args.name, roles, private.public_key(), by=admin.name, days=days)
    subject = {"operator": made.name, "kid": made.kid, "roles": [r.value for r in made.roles]}
    _journal(store, admin.decide(DecisionKind.OPERATOR_ADD, subject), "operator_added")
    return _issued(args, made, path)


def _bootstrap(args: argparse.Namespace, settings: Settings) -> int:
    signer_from_settings(settings)  # the deployment's signing key, or a coded refusal
    store = open_store(settings)
    path, private = ops.issue(_folder(args, settings), check_name(args.name))
    made = ops.bootstrap(store, args.name, private.public_key(), days=settings.operator_days)
    return _issued(args, made, path)


def _issued(args: argparse.Namespace, made: ops.Identity, path: Path) -> int:
    data = {**_row(made), "credential": str(path)}
    text = f"identity {made.name} ({', '.join(made.roles)})\ncredential (keep it): {path}"
    emit(args, data, text + f"\nexport CUSTODY_OPERATOR_CREDENTIAL={path}")
    return Exit.OK


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    rows = [_row(i) for i in ops.list_identities(open_store(settings))]
    return emit_rows(args, rows, _identity_line, "no identities")


def _identity_line(r: dict[str, Any]) -> str:
    return f"{r['name']:<20} {','.join(r['roles']):<28} {r['state']:<8} until {r['expires_at']:.10}"


def _revoke(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    admin = ops.acting(settings, store, DecisionKind.OPERATOR_REVOKE)
    gone = ops.revoke(store, args.name, by=admin.name)
    subject = {"operator": gone.name, "kid": gone.kid}
    _journal(store, admin.decide(DecisionKind.OPERATOR_REVOKE, subject), "operator_revoked")
    emit(args, _row(gone), f"identity {gone.name} revoked")
    return Exit.OK


def _journal(store: ObjectStore, decision: ops.SignedDecision, event: str) -> None:
    keep(store, decision, tenant=None, subject="operators", event=event)


def _row(identity: ops.Identity) -> dict[str, Any]:
    row = identity.model_dump(mode="json", exclude={"public_key"})
    row["state"] = "revoked" if identity.revoked_at else "active"
    return row
