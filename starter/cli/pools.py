"""``custody pools set|reset|status``: change the OCR and I/O pools' concurrency live.

Every worker applies a change within ``CUSTODY_POOL_REFRESH_S`` seconds,
without a restart (see :mod:`workers.slots`).
"""

from __future__ import annotations

import argparse
from typing import Any

from custody.errors import Code
from custody.settings import Settings
from custody.state.pools import MAX_LIMIT, POOLS, effective_limits, read_limits, set_limit
from custody.stores import open_store
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    verbs = add_command(sub, "pools").add_subparsers(dest="pools_verb", required=True)
    s = verbs.add_parser("set", parents=[common], help="set a pool's limit on every worker")
    s.add_argument("pool", choices=POOLS, help="which pool")
    s.add_argument("limit", type=int, help=f"tasks each worker runs at once, 1-{MAX_LIMIT}")
    s.set_defaults(handler=_set)
    r = verbs.add_parser("reset", parents=[common], help="back to the configured default")
    r.add_argument("pool", choices=POOLS, help="which pool")
    r.set_defaults(handler=_reset)
    verbs.add_parser("status", parents=[common], help="limits now in force").set_defaults(
        handler=_status
    )


def _set(args: argparse.Namespace, settings: Settings) -> int:
    try:
        set_limit(open_store(settings), args.pool, args.limit)
    except ValueError as err:
        return fail(args.json, Code.USAGE, str(err), Exit.USAGE)
    return _status(args, settings)


def _reset(args: argparse.Namespace, settings: Settings) -> int:
    set_limit(open_store(settings), args.pool, None)
    return _status(args, settings)


def _status(args: argparse.Namespace, settings: Settings) -> int:
    stored = read_limits(open_store(settings))
    limits = effective_limits(settings, stored)
    data = {
        "limits": limits,
        "overridden": sorted(stored),
        "refresh_s": settings.pool_refresh_s,
        "max_limit": MAX_LIMIT,
    }
    text = ", ".join(
        f"{p} {n}{' (set)' if p in stored else ' (default)'}" for p, n in limits.items()
    )
    emit(args, data, f"pools: {text}; workers apply changes within {settings.pool_refresh_s:g}s")
    return Exit.OK
