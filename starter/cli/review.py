"""``custody review ls|show|resolve``: the documents that wait for a person, and the decision.

``ls`` lists them (``sha256``, ``tenant``, ``reasons``, ``fields_needing_review``,
``waiting_since``; ``--tenant T``: that tenant's only). ``show SHA`` hands a
reviewer what they need: the fields read (values, confidences, boxes), each
page's text lines and image (``--out DIR`` writes the images as PNGs); an
egress event of kind ``review`` is written first. ``resolve SHA (--approve |
--reject CODE) [--field NAME=VALUE]... [--line PAGE:LINE=TEXT]... [--note TEXT]``
decides, as the identity ``CUSTODY_OPERATOR_CREDENTIAL`` names (role
``reviewer``), and answers the document's new ``state`` and ``reviewed_by``.
Pages and lines count from 1; ``--reject`` takes one of ILLEGIBLE,
WRONG_DOCUMENT, DUPLICATE, OTHER; free text goes in ``--note``, sealed like
document content and never in history or the ledger in plain. A refused
decision (not in review, already decided, an identity refused) exits 12.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
from pathlib import Path
from typing import Any

from custody.errors import UsageError
from custody.operators import DecisionKind, acting
from custody.reviews import reject_codes
from starter.cli.actor import recorded
from starter.cli.options import DOCUMENT_HELP, PURPOSE_HELP, purpose
from starter.cli.output import Exit, emit, emit_rows
from starter.cli.registry import add_command, with_client
from starter.client import review
from starter.client.connect import CustodyClient

_LINE = re.compile(r"^(\d+):(\d+)=(.*)$", re.DOTALL)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "review").add_subparsers(dest="review_verb", required=True)
    verbs.add_parser("ls", parents=[common], help="documents waiting for a person").set_defaults(
        handler=with_client(_ls)
    )
    show = verbs.add_parser("show", parents=[common], help="what a reviewer needs (egress)")
    show.add_argument("sha256", help=DOCUMENT_HELP)
    show.add_argument("--out", type=Path, default=None, help="write the page images here")
    show.add_argument("--purpose", type=purpose, default=None, metavar="TEXT", help=PURPOSE_HELP)
    show.set_defaults(handler=with_client(_show))
    r = verbs.add_parser("resolve", parents=[common], help="approve, correct, or reject")
    r.add_argument("sha256", help=DOCUMENT_HELP)
    how = r.add_mutually_exclusive_group(required=True)
    how.add_argument("--approve", action="store_true", help="publish (as corrected)")
    how.add_argument(
        "--reject", choices=reject_codes(), metavar="CODE", help=", ".join(reject_codes())
    )
    r.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a field's corrected value (repeatable)",
    )
    r.add_argument(
        "--line",
        action="append",
        default=[],
        metavar="PAGE:LINE=TEXT",
        help="a line's corrected text, pages and lines from 1 (repeatable)",
    )
    r.add_argument("--note", default=None, help="sealed beside the decision")
    r.set_defaults(handler=with_client(_resolve))


async def _ls(args: argparse.Namespace, client: CustodyClient) -> int:
    rows: list[dict[str, Any]] = [
        {
            "sha256": w.sha256,
            "tenant": w.tenant,
            "reasons": w.reasons,
            "fields_needing_review": w.fields_needing_review,
            "waiting_since": w.waiting_since.isoformat(),
            "overdue": w.overdue,
        }
        for w in await review.waiting(client, args.tenant)
    ]
    return emit_rows(args, rows, _waiting, "no documents in review")


def _waiting(r: dict[str, Any]) -> str:
    return (
        f"{r['sha256'][:12]}  {r['tenant'] or '-':<12} {','.join(r['reasons']):<32} "
        f"{','.join(r['fields_needing_review']) or '-'}  since {r['waiting_since'][:19]}"
    )


async def _show(args: argparse.Namespace, client: CustodyClient) -> int:
    actor = recorded(client.settings, client.store)
    data = json.loads(
        await review.show(client, args.sha256, args.tenant, actor=actor, purpose=args.purpose)
    )
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for page in data["pages"]:
            if page["image_png"]:
                (args.out / f"page-{page['page']:04d}.png").write_bytes(
                    base64.b64decode(page["image_png"])
                )
    emit(args, data, _text(data))
    return Exit.OK


def _text(data: dict[str, Any]) -> str:
    lines = [f"{data['sha256']}  waiting for: {', '.join(data['reasons'])}"]
    for name, f in data["fields"].items():
        mark = "  <- review" if f["needs_review"] else ""
        lines.append(f"  {name:<22} {f['status']:<8} {f['value']!s:<30} p{f['page']}{mark}")
    for page in data["pages"]:
        lines.append(f"page {page['page']} ({page['width']}x{page['height']})")
        lines += [f"  {n:>3}: {text}" for n, text in enumerate(page["lines"], start=1)]
    return "\n".join(lines)


async def _resolve(args: argparse.Namespace, client: CustodyClient) -> int:
    person = acting(client.settings, client.store, DecisionKind.REVIEW)
    signed, corrections = review.decision(
        person,
        args.sha256,
        args.tenant,
        reject=args.reject,
        fields=_fields(args.field),
        lines=_lines(args.line),
        note=args.note,
    )
    answer = await review.resolve(client, signed, corrections)
    data = {"sha256": args.sha256, "state": answer.state.value, "reviewed_by": answer.reviewed_by}
    if answer.code:
        data["code"] = answer.code
    emit(args, data, f"{args.sha256[:12]} {answer.state.value}, reviewed by {answer.reviewed_by}")
    return Exit.OK


def _fields(given: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(detail="--field takes NAME=VALUE")
        found[name.strip()] = value
    return found


def _lines(given: list[str]) -> list[tuple[int, int, str]]:
    found = []
    for item in given:
        match = _LINE.match(item)
        if match is None or int(match[1]) < 1 or int(match[2]) < 1:
            raise UsageError(detail="--line takes PAGE:LINE=TEXT, pages and lines from 1")
        found.append((int(match[1]), int(match[2]), match[3]))
    return found
