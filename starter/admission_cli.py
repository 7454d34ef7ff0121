"""``custody admission pause|resume|status``: the operator's hand on intake.

Pause stops new admissions on every edge that shares the object store (they
answer 503 with Retry-After); running work drains as usual. Resume lifts it.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from custody.settings import Settings
from custody.stores import open_store
from starter import commands
from starter.admission import Admission, set_paused
from starter.api import CustodyClient


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("admission", help="pause, resume or inspect admission control")
    verbs = p.add_subparsers(dest="admission_verb", required=True)
    verbs.add_parser("pause", parents=[common], help="refuse new work (503)").set_defaults(
        handler=_pause
    )
    verbs.add_parser("resume", parents=[common], help="admit new work again").set_defaults(
        handler=_resume
    )
    verbs.add_parser("status", parents=[common], help="waiting work and bounds").set_defaults(
        handler=_status
    )


def _pause(args: argparse.Namespace, settings: Settings) -> int:
    set_paused(open_store(settings), True)
    commands.emit(args, {"paused": True}, "admission paused")
    return 0


def _resume(args: argparse.Namespace, settings: Settings) -> int:
    set_paused(open_store(settings), False)
    commands.emit(args, {"paused": False}, "admission resumed")
    return 0


def _status(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: starter.cli imports this module while building its parser.
    from starter.cli import with_client

    async def go(args: argparse.Namespace, client: CustodyClient) -> int:
        stats = await Admission(client).refresh(force=True)
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
        commands.emit(args, data, text)
        return 0

    return with_client(go)(args, settings)
