"""``custody serve``: run the authenticated HTTP intake edge (:mod:`starter.edge.app`).

Uploads are staged like a worker's documents: in this process's private
folder, after the production tmpfs / encrypted-volume check, with the sweeper
removing what a killed edge left behind (``workers.common.start_staging``).
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn

from starter.cli.output import Exit
from starter.cli.registry import add_command, supervised, with_client
from starter.client.connect import CustodyClient
from starter.edge import server
from starter.edge.app import create_app
from workers.common import start_staging


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "serve", parents=[common])
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (8080; 0: any free)")
    p.set_defaults(handler=supervised(with_client(_serve, service="custody-edge")))


async def _serve(args: argparse.Namespace, client: CustodyClient) -> int:
    area, sweeper = start_staging(client.settings)  # ConfigurationError: refuses to start
    try:
        app = create_app(client, area=area)
        config = server.config(app, client.settings, args.host, args.port)
        await uvicorn.Server(config).serve()
    finally:
        sweeper.stop()
    return Exit.OK
