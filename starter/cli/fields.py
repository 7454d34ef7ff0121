"""``custody fields policy set|show``: a tenant's fields policy (``custody.state.rules``).

``set --file F`` reads a JSON object with the fields of
:class:`custody.state.rules.FieldsPolicy` (``expected_types``, ``languages``,
``on_language``, ``rules`` per type: ``required``, ``dates``, ``patterns``,
``on_missing``, ``on_invalid``; and ``types``: the tenant's own document
types, each ``fields`` by name with ``labels``, ``type``, ``pattern``,
``required``, and optional ``cues``, as ``custody/doctypes/discharge.json``
ships one) and stores it as the tenant's next signed version; documents
checked from then on are judged by it. ``show`` prints the policy in force
(the default when none was set).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from custody.errors import Code
from custody.settings import Settings
from custody.state.rules import FieldsPolicy, get_policy, set_policy
from custody.stores import open_store
from starter.cli.options import readable_file
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = add_command(sub, "fields")
    things = group.add_subparsers(dest="fields_thing", required=True)
    policy = things.add_parser("policy", help="the tenant's fields policy")
    actions = policy.add_subparsers(dest="fields_action", required=True)
    put = actions.add_parser("set", parents=[common], help="store the next version")
    put.add_argument(
        "--file", required=True, type=readable_file, help="a JSON file: the policy's fields"
    )
    put.set_defaults(handler=_set)
    show = actions.add_parser("show", parents=[common], help="the policy in force")
    show.set_defaults(handler=_show)


def _set(args: argparse.Namespace, settings: Settings) -> int:
    try:
        policy = FieldsPolicy.model_validate_json(Path(args.file).read_bytes())
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return fail(args.json, Code.BAD_REQUEST, f"{where}: {first['msg']}", Exit.USAGE)
    except OSError as err:
        return fail(args.json, Code.BAD_REQUEST, str(err).splitlines()[0], Exit.USAGE)
    version = set_policy(open_store(settings), args.tenant, policy)
    emit(args, {"version": version, "policy": policy.model_dump(mode="json")}, f"version {version}")
    return Exit.OK


def _show(args: argparse.Namespace, settings: Settings) -> int:
    policy = get_policy(open_store(settings), args.tenant)
    body = policy.model_dump(mode="json")
    emit(args, {"tenant": args.tenant, "policy": body}, policy.model_dump_json(indent=1))
    return Exit.OK
