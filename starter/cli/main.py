"""``custody``: the command line for operators and scripts.

Every command takes ``--json``; the exit statuses are :class:`starter.cli.output.Exit`.
The commands are listed in :mod:`starter.cli.registry`, each in its own module.
"""

from __future__ import annotations

import os
import sys

from custody.settings import Settings
from starter.cli.output import report
from starter.cli.registry import build_parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser(argv).parse_args(argv)
        code = args.handler(args, Settings())
    except Exception as err:
        # Before parsing succeeds there is no ``args.json``: the word itself decides.
        code = report(err, "--json" in argv)
    _exit(code)


def _exit(code: int) -> None:
    """Exit without interpreter teardown, after flushing what was printed.

    The SDK's Rust runtime threads can call into Python while CPython
    finalises and abort the process (``PyGILState_Release``, SIGABRT;
    temporalio/sdk-python#300). A short-lived client has nothing to tear down,
    so it skips finalisation rather than turn a clean exit status into 134.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
