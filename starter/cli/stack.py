"""``custody up`` and ``custody down``: the embedded stack on this machine."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from custody.settings import Settings
from starter.cli.output import Exit, emit
from starter.cli.registry import add_command
from starter.local.stack import Stack


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    up = add_command(sub, "up", parents=[common])
    up.add_argument("--detach", action="store_true", help="return once it is ready")
    up.set_defaults(handler=_up)
    add_command(sub, "down", parents=[common]).set_defaults(handler=_down)


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
    emit(
        args,
        info,
        f"Custody is up ({', '.join(started) or 'already running'}); "
        f"Temporal UI: {info['ui']}; state in {info['home']}",
    )
    if args.detach:
        return Exit.OK
    try:
        asyncio.run(asyncio.Event().wait())  # until Ctrl-C
    except KeyboardInterrupt:
        stack.down()
    return Exit.OK


def _down(args: argparse.Namespace, settings: Settings) -> int:
    stopped = Stack(settings).down()
    emit(args, {"stopped": stopped}, f"stopped: {', '.join(stopped) or 'nothing running'}")
    return Exit.OK
