"""``custody chaos SCENARIO|all [--trials N] [--seed S] [--json]``: the fault-injection harness.

Starts a real stack (Temporal dev server on SQLite, both workers as separate
processes) in a temporary home, drives documents through it while injecting
the scenario's fault, and checks that nothing was lost, duplicated or leaked
(:mod:`starter.chaos`). ``custody chaos --list`` prints the scenarios, one a
line, name first. Exit status 0 with no violations, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import random
from typing import Any

from custody.errors import UsageError
from custody.extras import require
from custody.settings import Settings
from starter.chaos.runner import run, table
from starter.chaos.scenarios import SCENARIOS
from starter.cli.output import Exit, emit
from starter.cli.registry import add_command, supervised


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, "chaos", parents=[common])
    parser.add_argument("scenario", nargs="?", help="a scenario name, or 'all'")
    parser.add_argument("--list", action="store_true", help="print the scenarios")
    parser.add_argument("--trials", type=int, default=1, help="trials per scenario")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random timing")
    parser.set_defaults(handler=supervised(handle))


def handle(args: argparse.Namespace, settings: Settings) -> int:
    if args.list:
        docs = {name: (fn.__doc__ or "").strip() for name, fn in SCENARIOS.items()}
        emit(args, docs, "\n".join(f"{name}\t{doc}" for name, doc in docs.items()))
        return Exit.OK
    if not args.scenario:
        raise UsageError(detail="custody chaos: give a scenario, 'all' or --list")
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    if any(n not in SCENARIOS for n in names):
        raise UsageError(detail=f"unknown scenario {args.scenario!r}; see custody chaos --list")
    if args.trials < 1:
        raise UsageError(detail="custody chaos: --trials must be at least 1")
    require("chaos", "custody chaos")  # before any process starts
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    report = asyncio.run(run(names, args.trials, seed))
    emit(args, report, table(report))
    return Exit.FAILED if report["violations"] else Exit.OK
