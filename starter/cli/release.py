"""``custody release SHA... --to RECIPIENT``: send published documents outside, once.

The release's id derives from (tenant, recipient, policy hash, documents), so
running the command again joins the same release instead of sending twice.
With ``--json`` it prints one object (:func:`release_json`, also the HTTP
edge's answer): ``release_id``, ``state`` (``running``, ``delivered``,
``refused`` or ``failed``), ``code``, ``recipient``, ``policy``,
``policy_sha256``, ``documents`` and ``files`` (each ``name``, ``sha256``,
``bytes``). Exit status (:class:`starter.cli.output.Exit`): 0 delivered or
running, 3 refused, 1 failed (the recipient stayed unreachable or said no),
7 still running when ``--wait`` gave up.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from custody import egress as eg
from custody.errors import EgressRefused
from custody.settings import Settings
from starter.cli.output import Exit, emit
from starter.cli.recipients import operator
from starter.cli.registry import add_command

_EXIT = {
    eg.ReleaseState.DELIVERED: Exit.OK,
    eg.ReleaseState.RUNNING: Exit.OK,
    eg.ReleaseState.REFUSED: Exit.REJECTED,
    eg.ReleaseState.FAILED: Exit.FAILED,
}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "release", parents=[common])
    p.add_argument(
        "documents", nargs="+", metavar="SHA256", help="published documents (8+ hex characters do)"
    )
    p.add_argument("--to", required=True, metavar="RECIPIENT", help="a registered recipient")
    p.add_argument("--policy", default="default", help="policy name (default: default)")
    p.add_argument("--wait", action="store_true", help="wait until delivered, refused or failed")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds --wait waits at most")
    p.set_defaults(handler=_command)


def refused_json(err: EgressRefused, recipient: str, documents: list[str]) -> dict[str, Any]:
    """A request refused before any workflow started: the same shape, without an id."""
    return {
        "release_id": None,
        "state": eg.ReleaseState.REFUSED.value,
        "code": str(err.code),
        "message": err.detail,
        "recipient": recipient,
        "policy": None,
        "policy_sha256": None,
        "documents": sorted(set(documents)),
        "files": [],
    }


def _command(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(_release(args, settings))


async def _release(args: argparse.Namespace, settings: Settings) -> int:
    from starter.client.connect import CustodyClient
    from starter.client.release import release, wait_release

    try:
        client = await CustodyClient.connect(settings)
    except RuntimeError as err:  # the SDK's connection failure
        raise ConnectionError(f"cannot reach Temporal at {settings.temporal_address}") from err
    try:
        result = await release(
            client,
            args.documents,
            to=args.to,
            policy=args.policy,
            tenant=args.tenant,
            actor=operator(),
        )
    except EgressRefused as err:
        body = refused_json(err, args.to, args.documents)
        emit(args, body, f"release refused: {err.code} {err.detail}")
        return Exit.REJECTED
    code = Exit.OK
    if args.wait:
        try:
            result = await asyncio.wait_for(wait_release(client, result.release_id), args.timeout)
        except TimeoutError:
            code = Exit.STILL_RUNNING
    emit(args, result.summary(), _text(result))
    return code or _EXIT[result.state]


def _text(result: eg.ReleaseResult) -> str:
    head = f"release {result.release_id} to {result.recipient}: {result.state.value}"
    if result.code:
        head += f" ({result.code})"
    files = [f"  {f.name}  {f.bytes} bytes  sha256 {f.sha256}" for f in result.files]
    return "\n".join([head, *files])
