"""``custody up`` and ``custody down``: the embedded stack on this machine."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from custody.settings import Settings
from starter.cli.output import Exit, emit, stdout
from starter.cli.registry import add_command, supervised
from starter.local.admin import local_admin
from starter.local.stack import Stack


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    up = add_command(sub, "up", parents=[common])
    up.add_argument(
        "--detach", action="store_true", help="return once it is ready, leaving it running"
    )
    up.set_defaults(handler=_up)
    add_command(sub, "down", parents=[common]).set_defaults(handler=_down)


def _up(args: argparse.Namespace, settings: Settings) -> int:
    if args.detach:
        _start(args, Stack(settings))
        return Exit.OK
    return supervised(_foreground)(args, settings)


def _foreground(args: argparse.Namespace, settings: Settings) -> int:
    """Start the stack and hold it until Ctrl-C or SIGTERM; whatever ends it, stop it."""
    stack = Stack(settings)
    started: list[str] = []  # interrupted while starting: the supervisor stops those
    try:
        started = _start(args, stack)
        asyncio.run(asyncio.Event().wait())  # until a signal cancels it
    except KeyboardInterrupt:
        pass  # the way a foreground stack is meant to end: exit 0
    finally:
        stack.down(only=started)  # workers first, then Temporal; not what ran before
    return Exit.OK


def _start(args: argparse.Namespace, stack: Stack) -> list[str]:
    started = stack.up()
    settings = stack.settings
    info: dict[str, object] = {
        "started": started,
        "running": stack.running(),
        "temporal": settings.temporal_address,
        "ui": f"http://localhost:{settings.temporal_ui_port}",
        "home": str(stack.home),
    }
    admin = local_admin(settings)
    info["admin_credential"] = str(admin) if admin else None
    acting = f"\nadmin identity's credential: {admin}" if admin else ""
    emit(
        args,
        info,
        f"Custody is up ({', '.join(started) or 'already running'}); "
        f"Temporal UI: {info['ui']}; state in {info['home']}{acting}",
    )
    stdout().flush()  # a foreground stack prints this, then waits: let it show now
    return started


def _down(args: argparse.Namespace, settings: Settings) -> int:
    stopped = Stack(settings).down()
    emit(args, {"stopped": stopped}, f"stopped: {', '.join(stopped) or 'nothing running'}")
    return Exit.OK
