"""``custody quarantine ls|release|reject``: compliance staff review what was set aside.

Both are decisions, made as the identity ``CUSTODY_OPERATOR_CREDENTIAL``
names (role ``reviewer``) and signed by its key. ``release`` is not a blind
re-run: it starts the document again under its own workflow ID, as the type
it was submitted as, with the release delivered as the Update
``release_from_quarantine`` in the same call (update-with-start; a run
already going gets it instead), so the new run ends in ``review`` for a
person to attest, whatever its checks say. ``reject`` is final. The reason
is stored beside the decision; only its hash enters the ledger, and the
append is checkpointed and witnessed at once (this process registers a
notary, as the workers do).
"""

from __future__ import annotations

import argparse
import hashlib
from datetime import datetime
from typing import Any

from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from custody import ids
from custody.errors import NotFound
from custody.ledger.checkpoints import notary_from_settings
from custody.ledger.events import notarize
from custody.models import DocumentInput, DocumentResult, OutcomeRecord
from custody.operators import DecisionKind, SignedDecision, acting
from custody.queues import WORKFLOW_NAME
from custody.refs import RefKeys
from custody.reviews import RELEASE_UPDATE, QuarantineRelease
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli.options import DOCUMENT_HELP
from starter.cli.output import Exit, emit
from starter.cli.registry import add_all_tenants, add_command, every_tenant, with_client
from starter.client import route
from starter.client.connect import CustodyClient
from starter.client.submit import _search_attributes, _summary
from starter.evidence import bundle as ev


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    q = add_command(sub, "quarantine").add_subparsers(dest="quarantine_cmd", required=True)
    q_ls = q.add_parser("ls", parents=[common], help="documents awaiting review")
    add_all_tenants(q_ls)
    q_ls.set_defaults(handler=_ls)
    choices = (("release", "run it again, into review"), ("reject", "final: never published"))
    for action, text in choices:
        p = q.add_parser(action, parents=[common], help=text)
        p.add_argument("sha256", help=DOCUMENT_HELP)
        p.add_argument("--reason", required=True, help="why, kept beside the decision")
        p.set_defaults(handler=with_client(_release) if action == "release" else _reject)


def _ls(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    refs = [
        r
        for r in ev.find(
            store, tenant=args.tenant, state="quarantined", all_tenants=every_tenant(args)
        )
        if ev.final_decision(store, r.sha256, r.tenant) != "reject"
    ]
    text = "\n".join(
        f"{r.sha256}  {r.code:<18} {r.tenant or '-':<12} {r.at:%Y-%m-%d %H:%M:%S}" for r in refs
    )
    emit(args, [r.model_dump(mode="json") for r in refs], text or "no documents in quarantine")
    return Exit.OK


def _quarantined(store: ObjectStore, sha256: str, tenant: str | None) -> ev.DocumentRef:
    for ref in ev.concluded(store, tenant):
        if (
            ref.sha256 == sha256
            and ref.state == "quarantined"
            and not store.exists(ids.record_key(sha256, tenant))
        ):
            return ref
    raise NotFound(f"{sha256} (not in quarantine)")


def _signed(
    settings: Settings, store: ObjectStore, kind: DecisionKind, args: argparse.Namespace
) -> SignedDecision:
    """The acting identity's decision on this document (refused without one)."""
    person = acting(settings, store, kind)
    reason_sha256 = hashlib.sha256(args.reason.encode()).hexdigest()
    subject = {"sha256": args.sha256, "tenant": args.tenant, "reason_sha256": reason_sha256}
    return person.decide(kind, subject)


def _reject(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    _quarantined(store, args.sha256, args.tenant)
    decision = _signed(settings, store, DecisionKind.QUARANTINE_REJECT, args)
    notarize(store, notary_from_settings(settings))
    key = ev.decide(store, args.sha256, args.tenant, "reject", decision, args.reason)
    emit(args, {"decision": key}, f"rejected for good; in the ledger: {_audit_hint(args)}")
    return Exit.OK


async def _release(args: argparse.Namespace, client: CustodyClient) -> int:
    # Connected first: a decision is recorded only when the run can be started.
    ref = _quarantined(client.store, args.sha256, args.tenant)
    decision = _signed(client.settings, client.store, DecisionKind.QUARANTINE_RELEASE, args)
    notarize(client.store, notary_from_settings(client.settings))
    key = ev.decide(client.store, args.sha256, args.tenant, "release", decision, args.reason)
    release = QuarantineRelease(by=decision.by, decision_sha256=decision.sha256(), decision_key=key)
    run_id = await _rerun(client, ref, release)
    text = f"released; running again as run {run_id}; follow it: {_status_hint(args)}"
    emit(args, {"decision": key, "run_id": run_id}, text)
    return Exit.OK


def _audit_hint(args: argparse.Namespace) -> str:
    """The command that shows the decision's ledger event, exactly as it can be typed."""
    return f"custody audit log {args.sha256[:12]}{_tenant_words(args)}"


def _status_hint(args: argparse.Namespace) -> str:
    return f"custody status {args.sha256[:12]}{_tenant_words(args)}"


def _tenant_words(args: argparse.Namespace) -> str:
    return f" --tenant {args.tenant}" if args.tenant else ""


async def _rerun(client: CustodyClient, ref: ev.DocumentRef, release: QuarantineRelease) -> str:
    """Start the document again under the same ID, the release delivered with the start;
    the new run's id."""
    settings = client.settings
    source = ids.source_key(ref.sha256, ref.tenant)
    kept = source if client.store.exists(source) else ids.intake_key(ref.sha256, ref.tenant)
    intake = ids.intake_key(ref.sha256, ref.tenant)
    inp = DocumentInput(
        sha256=ref.sha256,
        tenant=ref.tenant,
        source_id=ref.source_id,
        intake_key=intake,
        intake_sig=RefKeys.for_store(client.store).sign(intake, ref.tenant, ref.sha256),
        size_bytes=client.store.size(kept),
        submitted_at=datetime.now().astimezone(),
        io_task_queue=settings.io_task_queue,
        ocr_task_queue=await route.ocr_queue(client),  # the GPU pool if it keeps up
        document_type=_declared_type(client, ref),
        review_deadline_s=settings.review_deadline_s,
        review_expiry_s=settings.review_expiry_s,
    )
    start: WithStartWorkflowOperation[Any, DocumentResult] = WithStartWorkflowOperation(
        WORKFLOW_NAME,  # by name: the CLI never imports workflow code
        inp,
        id=ids.workflow_id(ref.sha256, ref.tenant),
        task_queue=settings.io_task_queue,
        # Release is the one deliberate exception to "a closed run is the answer".
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=_search_attributes(inp),
        static_summary=_summary(inp),
        result_type=DocumentResult,
    )
    run_id: str = await client.temporal.execute_update_with_start_workflow(
        RELEASE_UPDATE, release, start_workflow_operation=start, result_type=str
    )
    return run_id


def _declared_type(client: CustodyClient, ref: ev.DocumentRef) -> str | None:
    """The type the quarantined run was submitted as (its outcome keeps it), else None."""
    key = ids.outcome_key(ref.sha256, ref.tenant, ref.run_id)
    if not client.store.exists(key):
        return None
    return OutcomeRecord.model_validate_json(client.store.get(key)).document_type
