"""``custody release SHA... --to RECIPIENT``: send published documents outside, once.

The release's id derives from (tenant, recipient, policy hash, documents), so
running the command again joins the same release instead of sending twice.
With ``--json`` it prints one object (:func:`release_json`, also the HTTP
edge's answer): ``release_id``, ``state`` (``running``, ``delivered``,
``refused`` or ``failed``), ``code``, ``recipient``, ``policy``,
``policy_sha256``, ``documents`` and ``files`` (each ``name``, ``sha256``,
``bytes``). Exit status (:class:`starter.cli.output.Exit`): 0 delivered or
running, 3 refused, 1 failed (the recipient stayed unreachable or said no),
7 still running when ``--wait`` gave up. ``--purpose TEXT`` records the purpose
of disclosure with the release's egress event (default: the policy's).

``custody release approve RELEASE_ID`` approves a release that a two-person
policy holds (state ``awaiting_approval``), as the identity
``CUSTODY_OPERATOR_CREDENTIAL`` names (role ``releaser``), never the one that
requested it; with ``--json``: ``release_id``, ``state``, ``requested_by``,
``approved_by``. Exit 0 approved; 12 refused (``SAME_APPROVER``,
``ALREADY_DECIDED``, ``APPROVAL_NOT_PENDING``, an identity refused), the
release left as it was; 2 a release id that is not one.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from custody import egress as eg
from custody.errors import EgressRefused, UsageError
from custody.settings import Settings
from starter.cli.output import Exit, emit
from starter.cli.registry import Parser, add_command

#: ``custody release approve RELEASE_ID``: no document is called that (not hex).
APPROVE = "approve"

_EXIT = {
    eg.ReleaseState.DELIVERED: Exit.OK,
    eg.ReleaseState.RUNNING: Exit.OK,
    eg.ReleaseState.REFUSED: Exit.REJECTED,
    eg.ReleaseState.FAILED: Exit.FAILED,
    eg.ReleaseState.AWAITING_APPROVAL: Exit.OK,
}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "release", parents=[common])
    p.add_argument(
        "words",  # not ``documents``: resolved as prefixes only once it is no ``approve``
        nargs="+",
        metavar="SHA256",
        help="published documents (8+ hex characters do); or `approve RELEASE_ID`:"
        " approve a release held for a second person",
    )
    p.add_argument("--to", metavar="RECIPIENT", help="a registered recipient (needed to release)")
    p.add_argument(
        "--purpose", default=None, metavar="TEXT", help="purpose of disclosure (default: policy's)"
    )
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


def approve_parser() -> argparse.ArgumentParser:
    """``custody release approve``'s own arguments (after the word ``approve``)."""
    p = Parser(prog="custody release approve", add_help=False)
    p.add_argument("release_id", help="the release id `custody release` printed")
    return p


def _command(args: argparse.Namespace, settings: Settings) -> int:
    if args.words[0] == APPROVE:
        from starter.cli.release_approve import approve_command

        rest = approve_parser().parse_args(args.words[1:])
        return asyncio.run(approve_command(args, rest.release_id, settings))
    if args.to is None:
        raise UsageError(detail="custody release: the following arguments are required: --to")
    from starter.cli.prefixes import resolve_documents

    args.documents = args.words
    resolve_documents(args, settings)
    return asyncio.run(_release(args, settings))


async def _release(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli.actor import recorded
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
            # The requester: the acting identity when a credential is set (two-person rule).
            actor=recorded(settings, client.store),
            purpose=args.purpose,
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
