"""``custody policies add|ls|show``: what a release may include, versioned and pinned by hash.

``add NAME --file F`` reads a JSON object with the fields of
:class:`custody.egress.Policy` except ``name`` (``include``, ``watermark``,
``c2pa``, ``expires_after_days``, ``applies_to``) and stores it as the next
version of NAME; the same body again is the same version. Versions are never
rewritten, and the built-in policies (``default``, ``read``, ``export``) cannot
be redefined. A release pins the version it starts with by its SHA-256. The
name ``tenant`` is the tenant's own policy (``custody.state.tenant_policy``): its
``purpose`` is the default of the tenant's reads, its ``two_person`` covers every
deletion of the tenant's evidence.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from custody import egress as eg
from custody.errors import Code, EgressRefused
from custody.settings import Settings
from custody.state.egress import add_policy, current_policy, list_policies
from custody.stores import open_store
from starter.cli.options import readable_file
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = add_command(sub, "policies")
    actions = group.add_subparsers(dest="policies_action", required=True)
    add = actions.add_parser("add", parents=[common], help="store the next version of a policy")
    add.add_argument("name", help="the policy's name; the same name again adds a version")
    add.add_argument(
        "--file", required=True, type=readable_file, help="a JSON file: the policy's fields"
    )
    add.set_defaults(handler=_add)
    ls = actions.add_parser("ls", parents=[common], help="every version of every policy")
    ls.set_defaults(handler=_ls)
    show = actions.add_parser("show", parents=[common], help="a policy's newest version")
    show.add_argument("name", help="a policy's name, e.g. default")
    show.set_defaults(handler=_show)


def _add(args: argparse.Namespace, settings: Settings) -> int:
    try:
        body = json.loads(Path(args.file).read_text(encoding="utf-8"))
        if not isinstance(body, dict) or "name" in body:
            raise ValueError("the file holds one JSON object, without 'name'")
        policy = eg.Policy.model_validate(body | {"name": args.name})
        version, sha = add_policy(open_store(settings), args.tenant, policy)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return fail(args.json, Code.POLICY_INVALID, f"{where}: {first['msg']}", Exit.USAGE)
    except (OSError, ValueError) as err:
        return fail(args.json, Code.POLICY_INVALID, str(err).splitlines()[0], Exit.USAGE)
    except EgressRefused as err:
        return fail(args.json, err.code, err.detail, Exit.USAGE)
    info = _shown(policy, version, sha)
    emit(args, info, f"policy {policy.name} version {version} sha256 {sha}")
    return Exit.OK


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    rows = list_policies(open_store(settings), args.tenant)
    lines = [f"{'name':<24} {'version':>7}  sha256"]
    for r in rows:
        version = "builtin" if r["builtin"] else r["version"]
        lines.append(f"{r['name']:<24} {version!s:>7}  {r['sha256']}")
    emit(args, rows, "\n".join(lines))
    return Exit.OK


def _show(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    try:
        policy = current_policy(store, args.tenant, args.name)
    except EgressRefused as err:
        return fail(args.json, err.code, err.detail, Exit.NOT_FOUND)
    except ValueError as err:
        return fail(args.json, Code.POLICY_UNKNOWN, str(err), Exit.NOT_FOUND)
    rows = [r for r in list_policies(store, args.tenant) if r["name"] == policy.name]
    version = max(int(str(r["version"])) for r in rows)
    info = _shown(policy, version, policy.sha256())
    fields = json.dumps(info["policy"], indent=2, sort_keys=True)
    emit(args, info, f"policy {policy.name} version {version}\nsha256 {info['sha256']}\n{fields}")
    return Exit.OK


def _shown(policy: eg.Policy, version: int, sha: str) -> dict[str, Any]:
    return {
        "name": policy.name,
        "version": version,
        "sha256": sha,
        "builtin": policy.name in eg.BUILTIN_POLICIES,
        "policy": policy.model_dump(mode="json"),
    }
