"""``custody witness serve|key|trust``: run an independent witness and tell it which logs to watch.

    custody witness serve [--host H] [--port P] [--dir D] [--trust-log VKEY ...]
    custody witness key [--dir D]            its cosigner vkey, for CUSTODY_WITNESS_KEYS
    custody witness trust VKEY [--origins O] witness logs signed by VKEY (``custody.ledger/*``)

The directory (default ``CUSTODY_HOME/witness-state``) holds the witness's key and
state, and must be outside the object store and out of the workers' reach:
run it on another host or as another user in production. ``--trust-log``
(or ``trust``) names a log signing key as a vkey (``custody witness trust
--local`` takes this machine's signing keys).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from custody.ledger.checkpoints import log_vkey
from custody.ledger.signing import signer_from_settings
from custody.ledger.witness import WITNESS_HOME
from custody.settings import Settings
from starter.cli.output import Exit, emit
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    witness = add_command(sub, "witness").add_subparsers(dest="witness_cmd", required=True)
    serve = witness.add_parser(
        "serve", parents=[common], help="run the witness (C2SP tlog-witness)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=8235)
    serve.add_argument("--name", default=None, help="its name in cosignatures (kept once set)")
    serve.add_argument("--trust-log", action="append", default=[], metavar="VKEY")
    _dir(serve)
    serve.set_defaults(handler=_serve)
    key = witness.add_parser("key", parents=[common], help="the witness's cosigner vkey")
    _dir(key)
    key.set_defaults(handler=_key)
    trust = witness.add_parser("trust", parents=[common], help="witness a log signed by VKEY")
    trust.add_argument("vkey", nargs="?", help="the log's vkey (default with --local)")
    trust.add_argument("--local", action="store_true", help="this machine's signing key")
    trust.add_argument("--origins", default="custody.ledger/*", help="an origin, or a prefix*")
    _dir(trust)
    trust.set_defaults(handler=_trust)


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a TCP port")
    return port


def _dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=None, help="default CUSTODY_HOME/witness-state")


def _state(args: argparse.Namespace, settings: Settings, name: str | None = None) -> Any:
    from starter.witness.state import WitnessState

    return WitnessState(args.dir or settings.home / WITNESS_HOME, name)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from starter.witness.server import make_server, write_endpoint

    state = _state(args, settings, args.name)
    for text in args.trust_log:
        state.trust(text)
    server = make_server(state, args.host, args.port)
    write_endpoint(state, server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return Exit.OK


def _key(args: argparse.Namespace, settings: Settings) -> int:
    vkey = _state(args, settings).vkey
    emit(args, {"vkey": vkey}, vkey)
    return Exit.OK


def _trust(args: argparse.Namespace, settings: Settings) -> int:
    from custody.errors import UsageError

    vkey = log_vkey(signer_from_settings(settings)) if args.local else args.vkey
    if not vkey:
        raise UsageError(detail="custody witness trust: give a VKEY or --local")
    try:
        _state(args, settings).trust(vkey, args.origins)
    except ValueError as err:
        raise UsageError(detail=f"not a log vkey: {err}") from None
    emit(args, {"trusted": vkey, "origins": args.origins}, f"witnessing {args.origins}: {vkey}")
    return Exit.OK
