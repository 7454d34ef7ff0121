"""``custody admission pause|resume|status``: the operator's hand on intake.

``custody admission manual`` lists the documents parked in the manual lane
(:mod:`starter.edge.manual`); ``custody admission release SHA`` submits one.

Pause stops new admissions of every process that shares the object store (the
edge answers 503 with Retry-After, ``custody submit`` and the SDK raise
``ADMISSION_PAUSED``); running work drains as usual. Resume lifts it.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import asdict
from typing import Any

from custody.settings import Settings
from custody.stores import open_store
from starter.cli.output import Exit, emit, emit_rows
from starter.cli.registry import add_command, with_client
from starter.client.connect import CustodyClient
from starter.client.pause import set_paused
from starter.client.submit import Submission, submit
from starter.edge import manual


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "admission").add_subparsers(dest="admission_verb", required=True)
    verbs.add_parser("pause", parents=[common], help="refuse new work (503)").set_defaults(
        handler=_pause
    )
    verbs.add_parser("resume", parents=[common], help="admit new work again").set_defaults(
        handler=_resume
    )
    verbs.add_parser("status", parents=[common], help="waiting work and bounds").set_defaults(
        handler=with_client(_status)
    )
    manual_help = "documents parked in the manual lane"
    verbs.add_parser("manual", parents=[common], help=manual_help).set_defaults(handler=_manual)
    rel = verbs.add_parser("release", parents=[common], help="submit a parked document")
    rel.add_argument("sha256", help="the parked document's SHA-256 (8+ hex characters do)")
    rel.add_argument("--drop", action="store_true", help="discard it instead")
    rel.set_defaults(handler=with_client(_release))


def _pause(args: argparse.Namespace, settings: Settings) -> int:
    set_paused(open_store(settings), True)
    emit(args, {"paused": True}, "admission paused")
    return Exit.OK


def _resume(args: argparse.Namespace, settings: Settings) -> int:
    set_paused(open_store(settings), False)
    emit(args, {"paused": False}, "admission resumed")
    return Exit.OK


def _manual(args: argparse.Namespace, settings: Settings) -> int:
    return emit_rows(args, manual.parked(open_store(settings)), _parked, "manual lane empty")


def _parked(n: dict[str, Any]) -> str:
    return (
        f"{n['sha256'][:16]} tenant={n['tenant'] or '-'} {n['size_bytes']} bytes "
        f"{n['reason']} since {n['parked_at']}"
    )


async def _release(args: argparse.Namespace, client: CustodyClient) -> int:
    sub = await release(client, args.sha256, args.tenant, drop=args.drop)
    data = sub.model_dump(mode="json") if sub else {"dropped": args.sha256}
    emit(args, data, f"{'dropped' if sub is None else sub.state.value}")
    return Exit.OK


async def release(
    client: CustodyClient, sha256: str, tenant: str | None, *, drop: bool = False
) -> Submission | None:
    """Submit a parked document past admission (the operator's call), or drop it."""
    store = client.store
    sub = None
    if not drop:
        body, note = await asyncio.to_thread(manual.take, store, sha256, tenant)
        sub = await submit(
            client,
            body,
            source_id=note["source_id"],
            tenant=tenant,
            document_type=note.get("document_type"),  # None in notes parked before types
            bypass_admission=True,  # admission parked it; the operator lets it in
        )
    await asyncio.to_thread(manual.drop, store, sha256, tenant)
    return sub


async def _status(args: argparse.Namespace, client: CustodyClient) -> int:
    settings = client.settings
    stats = await client.admission.refresh(force=True)
    data: dict[str, Any] = {
        **asdict(stats),
        "max_waiting": settings.admission_max_waiting,
        "max_bytes": settings.admission_max_bytes,
        "reserved": settings.admission_reserved,
    }
    text = (
        f"{'paused' if stats.paused else 'admitting'}: {stats.documents}/"
        f"{settings.admission_max_waiting} documents, {stats.bytes}/"
        f"{settings.admission_max_bytes} bytes waiting; oldest {stats.oldest_age_s:.0f}s; "
        f"drain {stats.drain_per_s:.2f}/s"
    )
    emit(args, data, text)
    return Exit.OK
