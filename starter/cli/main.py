"""``custody``: the command line for operators and scripts.

Every command takes ``--json``. Exit status: 0 published (or the command
succeeded), 2 usage, 3 rejected, 4 quarantined, 5 not found, 6 cannot reach
Temporal or the store, 7 still running when a wait gave up.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from custody.errors import CustodyError, exit_code_for
from custody.settings import Settings
from starter.cli import documents as commands
from starter.client.submit import CustodyClient, NotFound
from starter.local.stack import Stack

EXIT_NOT_FOUND = 5
EXIT_UNREACHABLE = 6

#: Command groups that live in their own modules. Each module defines
#: ``register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser)``
#: and sets ``handler=fn(args, settings) -> int`` on the parsers it adds.
COMMAND_MODULES: tuple[str, ...] = (
    "starter.cli.bench",
    "starter.cli.evidence",
    "starter.edge.tenants",
    "starter.edge.app",
    "starter.cli.admission",
    "starter.cli.pools",
    "starter.chaos",
    "starter.cli.keys",
    "starter.local.codec_server",
    "starter.cli.ocr_config",
)

Handler = Callable[[argparse.Namespace, Settings], int]


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--tenant", default=None, help="tenant the document belongs to")
    p = argparse.ArgumentParser(prog="custody", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", parents=[common], help="start the embedded stack")
    up.add_argument("--detach", action="store_true", help="return once it is ready")
    sub.add_parser("down", parents=[common], help="stop the embedded stack")
    s = sub.add_parser("submit", parents=[common], help="submit documents")
    s.add_argument("paths", nargs="+")
    s.add_argument("--source-id", default=None)
    s.add_argument("--wait", action="store_true", help="wait for terminal states")
    s.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait at most")
    st = sub.add_parser("status", parents=[common], help="state of one document")
    st.add_argument("document", help="SHA-256 or a file path")
    r = sub.add_parser("result", parents=[common], help="published text of one document")
    r.add_argument("sha256")
    ls = sub.add_parser("ls", parents=[common], help="documents known, newest first")
    ls.add_argument("--state", default=None)
    ls.add_argument("--limit", type=int, default=100)
    ls.add_argument("--all-tenants", action="store_true", help="every tenant's documents")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, common)
    return p


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    settings = Settings()
    handlers: dict[str, Handler] = {
        "up": _up,
        "down": _down,
        "submit": with_client(commands.submit),
        "status": with_client(commands.status),
        "result": with_client(commands.result),
        "ls": with_client(commands.ls),
    }
    handler: Handler = getattr(args, "handler", None) or handlers[args.command]
    try:
        code = handler(args, settings)
    except NotFound as err:
        commands.error(args, "NOT_FOUND", f"no document {err}")
        code = EXIT_NOT_FOUND
    except CustodyError as err:
        commands.error(args, str(err.code), err.detail)
        code = exit_code_for("rejected")
    except (ConnectionError, TimeoutError, RuntimeError) as err:
        commands.error(args, "UNREACHABLE", f"{err}; is the stack up? (custody up)")
        code = EXIT_UNREACHABLE
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


def with_client(
    fn: Callable[[argparse.Namespace, CustodyClient], Coroutine[Any, Any, int]],
) -> Handler:
    """Adapt ``async fn(args, client)`` to a handler that connects first."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        async def go() -> int:
            try:
                client = await CustodyClient.connect(settings)
            except RuntimeError as err:  # the SDK's connection failure
                raise ConnectionError(
                    f"cannot reach Temporal at {settings.temporal_address}"
                ) from err
            return await fn(args, client)

        return asyncio.run(go())

    return run


def _up(args: argparse.Namespace, settings: Settings) -> int:
    stack = Stack(settings)
    started = stack.up()
    info = {
        "started": started,
        "running": stack.running(),
        "temporal": settings.temporal_address,
        "ui": f"http://localhost:{settings.temporal_ui_port}",
        "home": str(stack.home),
    }
    commands.emit(
        args,
        info,
        f"Custody is up ({', '.join(started) or 'already running'}); "
        f"Temporal UI: {info['ui']}; state in {info['home']}",
    )
    if args.detach:
        return 0
    try:
        asyncio.run(asyncio.Event().wait())  # until Ctrl-C
    except KeyboardInterrupt:
        stack.down()
    return 0


def _down(args: argparse.Namespace, settings: Settings) -> int:
    stopped = Stack(settings).down()
    commands.emit(args, {"stopped": stopped}, f"stopped: {', '.join(stopped) or 'nothing running'}")
    return 0


if __name__ == "__main__":
    main()
