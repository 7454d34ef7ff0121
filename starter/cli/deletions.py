"""``custody deletions ls|approve``: the second person of the two-person rule for deletions.

Under a tenant policy whose ``two_person`` is on (``custody.state.tenant_policy``),
``custody retention approve`` and ``custody keys shred`` file a deletion request
and delete nothing (``starter.evidence.deletions``). ``ls`` lists the requests
(each: ``request_id``, ``action``, ``tenant``, ``sha256``, ``approval``,
``requested_by``, ``requested_at``, ``approved_by``); ``approve REQUEST_ID``, as
the identity ``CUSTODY_OPERATOR_CREDENTIAL`` names (role ``admin``, not the
requester), signs the approval: a shred is then carried out at once, a retention
deletion at ``custody retention apply`` once its period has run out. With
``--json``: ``request_id``, ``action``, ``tenant``, ``requested_by``,
``approved_by``, ``state``. Exit 0 approved; 12 refused (``SAME_APPROVER``,
``ALREADY_DECIDED``, ``APPROVAL_NOT_PENDING``, ``OPERATOR_REVOKED``,
``OPERATOR_EXPIRED``, ``ROLE_REQUIRED``).
"""

from __future__ import annotations

import argparse
from typing import Any

from custody.operators import DecisionKind, acting
from custody.settings import Settings
from custody.stores import open_store
from starter.cli.output import Exit, emit, emit_rows
from starter.cli.registry import add_all_tenants, add_command, every_tenant
from starter.cli.retention import notarized_store
from starter.evidence import deletions as dl


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "deletions").add_subparsers(dest="deletions_cmd", required=True)
    ls = verbs.add_parser("ls", parents=[common], help="deletion requests and who approved them")
    add_all_tenants(ls, "every tenant's requests (the default without --tenant)")
    ls.set_defaults(handler=_ls)
    ok = verbs.add_parser(
        "approve", parents=[common], help="approve a deletion, as a second person"
    )
    ok.add_argument("request_id", help="the request's id (16 hex), as retention approve or "
                    "keys shred printed it")  # fmt: skip
    ok.set_defaults(handler=_approve)


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    every = every_tenant(args) or args.tenant is None
    rows = dl.pending(open_store(settings), args.tenant, every)
    return emit_rows(args, rows, _request, "no deletion requests")


def _request(r: dict[str, object]) -> str:
    return (
        f"{r['request_id']}  {r['action']:<9} {r['tenant'] or '-':<12} {r['requested_by']}"
        f" -> {r['approved_by'] or 'awaiting approval'}"
    )


def _approve(args: argparse.Namespace, settings: Settings) -> int:
    store = notarized_store(settings)
    person = acting(settings, store, DecisionKind.EVIDENCE_DELETION)
    request, approval = dl.approve(store, person, args.request_id)
    data = {"request_id": request.request_id, "action": request.action, "tenant": request.tenant}
    data |= {"requested_by": request.requested_by, "approved_by": approval.approved_by}
    if request.action == "shred":
        from starter.cli.keys import carry_out

        shred = carry_out(settings, request.decision, approval.approved_by)
        data |= {"state": "deleted", "event_seq": shred["event_seq"]}
        emit(args, data, f"tenant {request.tenant} shredded; its objects are unreadable")
        return Exit.OK
    emit(args, data | {"state": "approved"}, "approved: retention apply deletes it when due")
    return Exit.OK
