"""``custody chaos SCENARIO|all [--trials N] [--seed S] [--json]``: the fault-injection harness.

Starts a real stack (Temporal dev server on SQLite, both workers as separate
processes) in a temporary home, drives documents through it while injecting
the scenario's fault, and checks that nothing was lost, duplicated or leaked.
``custody chaos --list`` prints the scenarios, one a line, name first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from typing import Any

from custody.settings import Settings


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("chaos", parents=[common], help="fault-injection scenarios")
    parser.add_argument("scenario", nargs="?", help="a scenario name, or 'all'")
    parser.add_argument("--list", action="store_true", help="print the scenarios")
    parser.add_argument("--trials", type=int, default=1, help="trials per scenario")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random timing")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the runner pulls in the API and the workflow; --help stays light.
    from starter.chaos.runner import run, table
    from starter.chaos.scenarios import SCENARIOS

    if args.list or not args.scenario:
        for name, fn in SCENARIOS.items():
            print(f"{name}\t{(fn.__doc__ or '').strip()}")
        return 0 if args.list else 2
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    if any(n not in SCENARIOS for n in names) or args.trials < 1:
        print(f"unknown scenario {args.scenario!r}; see custody chaos --list")
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    report = asyncio.run(run(names, args.trials, seed))
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 1 if report["violations"] else 0
