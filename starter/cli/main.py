"""``custody``: the command line for operators and scripts.

Every command takes ``--json``; the exit statuses are :class:`starter.cli.output.Exit`.
The commands are listed in :mod:`starter.cli.registry`, each in its own module.
:func:`run` is one command line in this process (what the tests call);
:func:`main` is the console script around it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

from custody.settings import Settings
from starter.cli.output import Exit, report, stdout
from starter.cli.registry import build_parser, owning_process


def main(argv: list[str] | None = None) -> None:
    with owning_process():  # the console script: its commands own their children
        code = run(sys.argv[1:] if argv is None else argv)
    _exit(code)


def run(argv: Sequence[str], settings: Settings | None = None) -> int:
    """Run one command line; its exit status. Nothing it meets escapes as a traceback.

    ``settings`` default to the ``CUSTODY_*`` environment, read here so a
    malformed variable is a coded CONFIGURATION answer too.
    """
    words = list(argv)
    try:
        args = build_parser(words).parse_args(words)
        settings = settings if settings is not None else Settings()
        from starter.cli.prefixes import resolve_documents  # after parsing: --help skips it

        resolve_documents(args, settings)
        code = int(args.handler(args, settings))
        stdout().flush()  # a reader that left shows here, while it is still ours to answer
    except BrokenPipeError:
        return _pipe_closed()
    except SystemExit as done:  # --help and --version print, then argparse exits
        return _flushed(done.code if isinstance(done.code, int) else Exit.USAGE)
    except KeyboardInterrupt:
        print("custody: interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except Exception as err:
        # Before parsing succeeds there is no ``args.json``: the word itself decides.
        try:
            return report(err, "--json" in words)
        except BrokenPipeError:
            return _pipe_closed()
    return code


def _flushed(code: int) -> int:
    """``code``, once what was printed reached the reader (else PIPE_CLOSED)."""
    try:
        stdout().flush()
    except BrokenPipeError:
        return _pipe_closed()
    return code


def _pipe_closed() -> int:
    """The reader of stdout went away: say nothing, and let no later flush fail again."""
    if stdout() is sys.stdout:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    return Exit.PIPE_CLOSED


def _exit(code: int) -> None:
    """Exit without interpreter teardown, after flushing what was printed.

    The SDK's Rust runtime threads can call into Python while CPython
    finalises and abort the process (``PyGILState_Release``, SIGABRT;
    temporalio/sdk-python#300). A short-lived client has nothing to tear down,
    so it skips finalisation rather than turn a clean exit status into 134.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing left to say
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
