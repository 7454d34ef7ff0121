"""``custody retention sweep|approve|apply``: scratch expiry and evidence deletion.

``sweep`` expires scratch objects past their age (custody.stores.expiry) and
runs the orphan check: an intake object whose document has no record, no
outcome and no workflow in Temporal, running or finished, is reported, and
deleted once older than ``CUSTODY_ORPHAN_GRACE_S``.

``approve SHA --policy P`` records an evidence owner's approval, signed by
the acting identity (``CUSTODY_OPERATOR_CREDENTIAL``, role ``admin``);
``apply`` (an admin too) deletes approved evidence whose period has run out, each
deletion logged first (starter.evidence.retention_apply). Under the tenant policy's
two-person rule an approval also files a deletion request, and ``apply`` deletes
only once a second identity approved it (``custody deletions approve``). Every ledger append here is
checkpointed and witnessed: this process registers a notary, as the workers do.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.errors import UsageError
from custody.ledger.checkpoints import notary_from_settings
from custody.ledger.events import notarize
from custody.ledger.signing import public_keys, signer_from_settings
from custody.operators import DecisionKind, acting
from custody.settings import Settings
from custody.state.tenant_policy import deletions_need_two
from custody.stores import ObjectStore, open_store
from custody.stores import expiry as scratch_expiry
from starter.cli.options import DOCUMENT_HELP
from starter.cli.output import Exit, emit
from starter.cli.registry import add_all_tenants, add_command, every_tenant, with_client
from starter.client.connect import CustodyClient
from starter.evidence import deletions as dl
from starter.evidence.retention import approve, concluded_at, expires_at, policies
from starter.evidence.retention_apply import Retention
from starter.evidence.trust import TrustAnchors


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    r = add_command(sub, "retention").add_subparsers(dest="retention_cmd", required=True)
    sweep = r.add_parser("sweep", parents=[common], help="expire scratch; find orphan intake")
    sweep.add_argument("--dry-run", action="store_true", help="report, delete nothing")
    sweep.add_argument(
        "--no-orphan-check", action="store_true", help="age expiry only (Temporal not asked)"
    )
    sweep.set_defaults(handler=_sweep)
    ok = r.add_parser("approve", parents=[common], help="an evidence owner's signed approval")
    ok.add_argument("sha256", help=DOCUMENT_HELP)
    ok.add_argument("--policy", required=True, help="the retention policy it falls under")
    ok.set_defaults(handler=_approve)
    go = r.add_parser("apply", parents=[common], help="delete approved, expired evidence")
    go.add_argument("--dry-run", action="store_true", help="report what is due, delete nothing")
    add_all_tenants(go, "every tenant with approvals (the default without --tenant)")
    go.set_defaults(handler=_apply)


def notarized_store(settings: Settings) -> ObjectStore:
    """The store with every ledger append checkpointed and witnessed (deciding commands)."""
    store = open_store(settings)
    notarize(store, notary_from_settings(settings))
    return store


def _sweep(args: argparse.Namespace, settings: Settings) -> int:
    if args.no_orphan_check:
        return _sweep_store(args, open_store(settings), settings, None)
    return with_client(_sweep_with_temporal)(args, settings)


async def _sweep_with_temporal(args: argparse.Namespace, client: CustodyClient) -> int:
    now = datetime.now(UTC)
    orphans = []
    for found, sha256, tenant in scratch_expiry.unclaimed_intake(client.store, now):
        if await _has_workflow(client, sha256, tenant):
            continue
        due = found.age_s >= client.settings.orphan_grace_s and not args.dry_run
        deleted = due and scratch_expiry.delete_orphan(client.store, found.key)
        orphans.append(
            {**found.model_dump(), "sha256": sha256, "tenant": tenant} | {"deleted": deleted}
        )
    return _sweep_store(args, client.store, client.settings, orphans)


async def _has_workflow(client: CustodyClient, sha256: str, tenant: str | None) -> bool:
    """Whether Temporal holds a run of the document, running or finished."""
    try:
        await client.handle(sha256, tenant).describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


def _sweep_store(
    args: argparse.Namespace,
    store: ObjectStore,
    settings: Settings,
    orphans: list[dict[str, Any]] | None,
) -> int:
    ages = scratch_expiry.max_ages(settings)
    expired = scratch_expiry.expire(store, ages, datetime.now(UTC), dry_run=args.dry_run)
    data = {"expired": [e.model_dump() for e in expired], "orphans": orphans}
    verb = "would expire" if args.dry_run else "expired"
    text = f"{verb} {len(expired)} scratch objects"
    if orphans is not None:
        gone = sum(o["deleted"] for o in orphans)
        text += f"; {len(orphans)} orphan intake objects, {gone} deleted"
    emit(args, data, text)
    return Exit.OK


def _approve(args: argparse.Namespace, settings: Settings) -> int:
    policy = policies(settings).get(args.policy)
    if policy is None:
        known = ", ".join(policies(settings)) or "none"
        raise UsageError(detail=f"no retention policy {args.policy!r} (known: {known})")
    ids.check_sha256(args.sha256)
    store, signer = notarized_store(settings), signer_from_settings(settings)
    subject = {"sha256": args.sha256, "tenant": args.tenant, "policy": policy.name}
    person = acting(settings, store, DecisionKind.RETENTION_APPROVE)
    decision = person.decide(DecisionKind.RETENTION_APPROVE, subject | {"days": policy.days})
    signer.publish(store)  # verifiers find the key that signed the approval
    key, signed = approve(store, signer, policy, args.sha256, args.tenant, decision)
    start = concluded_at(store, args.sha256, args.tenant)
    until = expires_at(start, policy) if start else None
    data = {"approval": key, "policy": policy.name, "days": policy.days, "expires_at": until}
    text = f"approved under {policy.name}; deletable from {until:%Y-%m-%d}"
    if deletions_need_two(store, args.tenant):  # the deletion waits for a second person
        asked = dl.new_request(person, "retention", args.tenant, decision, sha256=args.sha256,
                               approval=key)  # fmt: skip
        data |= {"state": "awaiting_approval", "request_id": dl.propose(store, asked).request_id}
        text += f", once a second person approves: custody deletions approve {asked.request_id}"
    emit(args, data, text)
    return Exit.OK


def _apply(args: argparse.Namespace, settings: Settings) -> int:
    store = notarized_store(settings)
    if not args.dry_run:  # only an admin deletes; anyone may see what is due
        acting(settings, store, DecisionKind.RETENTION_APPLY)
    keys = TrustAnchors.from_settings(settings).trusted(public_keys(store))
    retention = Retention(
        store, policies(settings), keys, signer_from_settings(settings), datetime.now(UTC)
    )
    found = []
    for tenant in _tenants(args, store):
        found += retention.apply(tenant, dry_run=args.dry_run)
    data = {
        "dispositions": [d.model_dump(mode="json") for d in found],
        "deleted": sum(d.state == "deleted" for d in found),
    }
    text = "\n".join(
        f"{d.sha256}  {d.tenant or '-':<12} {d.state:<18} {d.policy} {d.objects} objects"
        for d in found
    )
    emit(args, data, text or "no approved evidence")
    return Exit.OK


def _tenants(args: argparse.Namespace, store: ObjectStore) -> list[str | None]:
    if not every_tenant(args) and args.tenant:
        return [ids.check_tenant(args.tenant)]
    scopes = {key.split("/")[1] for key in store.list("retention/")}
    return [None if s == "_" else s for s in sorted(scopes)]
