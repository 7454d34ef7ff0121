"""``custody codec-server``: the Web UI's remote codec (:mod:`starter.local.codec_server`).

It serves until stopped, on loopback only; ``custody up`` starts it beside the
stack, so this command is for a UI started some other way.
"""

from __future__ import annotations

import argparse
from typing import Any

from custody.settings import Settings
from starter.cli.output import Exit
from starter.cli.registry import add_command
from starter.local.codec_server import serve


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "codec-server", parents=[common])
    p.add_argument("--port", type=int, default=None, help="default: the UI port + 1")
    p.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    serve(settings, args.port)
    return Exit.OK
