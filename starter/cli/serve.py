"""``custody serve``: run the authenticated HTTP intake edge (:mod:`starter.edge.app`)."""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn

from starter.cli.output import Exit
from starter.cli.registry import add_command, with_client
from starter.client.connect import CustodyClient
from starter.edge.app import create_app


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "serve", parents=[common])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.set_defaults(handler=with_client(_serve, service="custody-edge"))


async def _serve(args: argparse.Namespace, client: CustodyClient) -> int:
    config = uvicorn.Config(create_app(client), host=args.host, port=args.port, log_level="warning")
    await uvicorn.Server(config).serve()
    return Exit.OK
