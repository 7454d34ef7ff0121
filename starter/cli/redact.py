"""``custody redact SHA --policy P``: a published document's redacted view, made once and signed.

The view is made on the I/O workers, not here (``activities.redaction``, through
a short ``RedactWorkflow``): the source is rendered in their sandboxed child,
the removed boxes painted, a fresh PDF built and read back by re-extraction and
their OCR engine, every detector re-run on both readings, then signed with
their key. This command loads no engine and decodes nothing; it asks, waits at
most ``--timeout`` seconds, and prints what the worker stored.

With ``--json`` it prints one object. Its contract (issue #28): ``state``
(``kept`` or ``refused``), ``code`` (on refusal: ``IDENTIFIER_FOUND`` or
``REDACTION_LEAK``, else null), ``view_sha256`` (the SHA-256 of the view's
PDF, as the ``redaction_created`` event records it), ``boxes`` (painted boxes
per reason: ``field``, ``detector``, ``sweep``, ``recheck``; the event's
``box_count`` is their sum) and ``found`` (``[{kind, page, box}]``: what a
detector still found in a refused view, never its text). Beside them:
``sha256``, ``view_key``, ``view_json_sha256`` (the signed view record's
hash), ``pdf_key``, ``pdf_sha256``, ``record_sha256``, ``policy``,
``policy_sha256``, ``regions``, ``sources`` (boxes per field or detector),
``check``, ``approved_by`` and ``event`` (the ledger event's ``seq`` and
``hash``). Exit status 0 kept; 3 refused (nothing stored) or a document not
published here (answered from the store, before any worker is asked); no answer
in time, ``IO_TIMEOUT``, exit status 7 (the view is still made; ask again).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from custody.errors import EGRESS_REFUSE_CODES, Code
from custody.settings import Settings
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command, with_client

#: The codes of a view its check refused: ``state: refused``, exit status 3.
REFUSALS = frozenset({Code.REDACTION_LEAK, Code.IDENTIFIER_FOUND})

if TYPE_CHECKING:
    from activities.redact.policy import RedactionPolicy
    from custody.redactions import RedactInput, RedactResult
    from custody.stores import ObjectStore
    from starter.client.connect import CustodyClient


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "redact", parents=[common])
    p.add_argument("sha256", metavar="SHA256")
    p.add_argument(
        "--policy", default="default", help="redaction policy: a built-in name or a JSON file"
    )
    p.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds to wait for the I/O workers"
    )
    p.set_defaults(handler=_command)


def _command(args: argparse.Namespace, settings: Settings) -> int:
    from activities.redact.policy import load_redaction  # names and detectors only
    from custody import ids
    from custody.stores import open_store

    policy = load_redaction(args.policy)
    sha = ids.check_sha256(args.sha256)
    store = open_store(settings)
    if not store.exists(ids.record_key(sha, args.tenant)):
        detail = f"document {sha[:12]} is not published here"
        return fail(args.json, Code.NOT_PUBLISHED, detail, Exit.REJECTED)
    by = approval(settings, store, args, policy.sha256())

    async def run(args: argparse.Namespace, client: CustodyClient) -> int:
        return await ask(args, client, policy, by)

    return with_client(run)(args, settings)


def approval(settings: Settings, store: ObjectStore, args: argparse.Namespace, policy: str) -> str:
    """The acting reviewer's signed approval, kept in the document's ledger; their name."""
    from custody.operators import DecisionKind, acting
    from custody.operators.journal import keep

    person = acting(settings, store, DecisionKind.REDACTION_APPROVAL)
    subject = {"sha256": args.sha256, "tenant": args.tenant, "policy_sha256": policy}
    decision = person.decide(DecisionKind.REDACTION_APPROVAL, subject)
    keep(store, decision, tenant=args.tenant, subject=args.sha256, event="redaction_approved",
         sha256=args.sha256)  # fmt: skip
    return person.name


async def ask(
    args: argparse.Namespace, client: CustodyClient, policy: RedactionPolicy, by: str
) -> int:
    """Ask the I/O workers for the view and print it; the command's exit status."""
    from temporalio.client import WorkflowFailureError

    from custody.redactions import RedactInput
    from starter.client.failures import failure_of

    policy_json = policy.model_dump_json()
    inp = RedactInput(sha256=args.sha256, tenant=args.tenant, policy=policy_json, approved_by=by)
    try:
        result = await asyncio.wait_for(_view(client, inp, policy.sha256()), args.timeout)
    except TimeoutError:
        detail = f"no answer from the I/O workers within {args.timeout:g} s; ask again"
        return fail(args.json, Code.IO_TIMEOUT, detail, Exit.STILL_RUNNING)
    except WorkflowFailureError as err:
        code, message = failure_of(err, timeout=Code.IO_TIMEOUT, default=Code.INTERNAL)
        if code in REFUSALS:
            return refused(args, code, message)
        status = Exit.REJECTED if code in EGRESS_REFUSE_CODES else Exit.FAILED
        return fail(args.json, code, message, status)
    return _print(args, client, result)


async def _view(client: CustodyClient, inp: RedactInput, policy_sha256: str) -> RedactResult:
    from temporalio.common import WorkflowIDConflictPolicy

    from custody.redactions import REDACT_WORKFLOW_NAME, RedactResult, redact_workflow_id

    result: RedactResult = await client.temporal.execute_workflow(
        REDACT_WORKFLOW_NAME,
        inp,
        id=redact_workflow_id(inp.sha256, inp.tenant, policy_sha256),
        task_queue=client.settings.io_task_queue,
        result_type=RedactResult,
        # Two asks for one view converge on one workflow, and so on one view.
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    return result


def refused(args: argparse.Namespace, code: Code, message: str) -> int:
    """A view the worker's check refused: its code and what was found, by kind and box."""
    found = found_in(code, message)
    body = {
        "state": "refused",
        "code": code.value,
        "sha256": args.sha256,
        "view_sha256": None,
        "boxes": {},
        "found": found,
        "message": message,
    }
    emit(args, body, f"redacted view of {args.sha256[:12]} refused: {code.value} ({message})")
    return Exit.REJECTED


def found_in(code: Code, message: str) -> list[dict[str, Any]]:
    """``[{kind, page, box}]`` from a refusal's message: the detectors' finds as they are, a
    removed string by where it was (``ocr:p2``: page 1, 0-based; ``bytes``: no page)."""
    if code == Code.IDENTIFIER_FOUND and message.startswith("found: "):
        found: list[dict[str, Any]] = json.loads(message.removeprefix("found: "))
        return found
    if not message.startswith("found in "):
        return []
    wheres = message.removeprefix("found in ").split(", ")
    return [{"kind": "removed_string", "page": _page(w), "box": None} for w in wheres]


def _page(where: str) -> int | None:
    _, _, page = where.partition(":p")
    return int(page) - 1 if page.isdigit() else None


def _print(args: argparse.Namespace, client: CustodyClient, result: RedactResult) -> int:
    from activities.redact.view import SignedView

    view = SignedView.model_validate_json(client.store.get(result.view_key)).view
    body: dict[str, Any] = {
        "state": "kept",
        "code": None,
        "view_sha256": view.pdf_sha256,
        "boxes": dict(Counter(e.reason for e in view.entries)),
        "found": [],
        "sha256": view.sha256,
        "view_key": result.view_key,
        "view_json_sha256": result.view_sha256,
        "pdf_key": view.pdf_key,
        "pdf_sha256": view.pdf_sha256,
        "record_sha256": view.record_sha256,
        "policy": view.policy,
        "policy_sha256": view.policy_sha256,
        "regions": len(view.entries),
        "sources": dict(Counter(e.source for e in view.entries)),
        "check": view.check.model_dump(),
        "approved_by": view.approved_by,
        "event": view.event.model_dump() if view.event else None,
    }
    sha = view.sha256
    text = f"redacted view of {sha[:12]}: {len(view.entries)} regions, pdf sha256 {view.pdf_sha256}"
    emit(args, body, text)
    return Exit.OK
