"""``custody bench KIND``: benchmarks that report ratios measured side by side in one run.

Each kind lives in its own module exposing ``add_arguments(parser)`` and
``run(args, settings) -> int``; list it in ``BENCHES``.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

#: kind -> module implementing it.
BENCHES: dict[str, str] = {
    "ocr": "starter.bench.ocr",
    "intake": "starter.bench.intake",
}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    bench = sub.add_parser("bench", help="benchmarks (ratios measured side by side)")
    kinds = bench.add_subparsers(dest="bench_kind", required=True)
    for kind, module_name in BENCHES.items():
        module = importlib.import_module(module_name)
        parser = kinds.add_parser(
            kind, parents=[common], help=(module.__doc__ or kind).split("\n")[0]
        )
        module.add_arguments(parser)
        parser.set_defaults(handler=module.run)
