"""``custody ocr config [history|rollback|pin REF|unpin]``: the OCR configuration in force.

``config`` shows the active configuration (engine, version, parameters, model
hashes) and any pin; ``history`` every change; ``rollback`` pins the previous
configuration (the last known-good) so OCR workers started from then on run
it; ``pin REF`` pins a given entry (sequence number or digest prefix);
``unpin`` lets workers follow their settings again. Each change is recorded
with who made it and why.
"""

from __future__ import annotations

import argparse
import getpass
import socket
from typing import Any

from custody.errors import Code
from custody.settings import Settings
from custody.state.ocr_config import ConfigEntry, ConfigRegistry
from custody.stores import open_raw_store
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    groups = add_command(sub, "ocr").add_subparsers(dest="ocr_group", required=True)
    config = groups.add_parser("config", parents=[common], help="show the active configuration")
    config.set_defaults(handler=show)
    actions = config.add_subparsers(dest="config_action")
    history = actions.add_parser("history", parents=[common], help="every change, oldest first")
    history.set_defaults(handler=show_history)
    rollback = actions.add_parser("rollback", parents=[common], help="pin the previous one")
    rollback.add_argument("--reason", required=True, help="why, for the record")
    rollback.set_defaults(handler=rollback_config)
    pin = actions.add_parser("pin", parents=[common], help="pin a configuration by seq/digest")
    pin.add_argument("ref", metavar="REF", help="history sequence number or digest prefix")
    pin.add_argument("--reason", required=True, help="why, for the record")
    pin.set_defaults(handler=pin_config)
    unpin = actions.add_parser("unpin", parents=[common], help="follow worker settings again")
    unpin.add_argument("--reason", required=True, help="why, for the record")
    unpin.set_defaults(handler=unpin_config)


def _registry(settings: Settings) -> ConfigRegistry:
    return ConfigRegistry(open_raw_store(settings))


def _actor() -> str:
    return f"{getpass.getuser()}@{socket.gethostname()}"


def _describe(entry: ConfigEntry) -> str:
    head = f"#{entry.seq} {entry.at:%Y-%m-%d %H:%M:%S} {entry.action:<9} {entry.digest or '-':<16}"
    if entry.config is not None:
        head += f" {entry.config.engine} {entry.config.version}"
    return head + f" by {entry.actor}" + (f" ({entry.reason})" if entry.reason else "")


def show(args: argparse.Namespace, settings: Settings) -> int:
    registry = _registry(settings)
    active, pinned = registry.active(), registry.pinned()
    data = {
        "active": active.model_dump(mode="json") if active else None,
        "pinned": {"digest": pinned.digest, **pinned.model_dump(mode="json")} if pinned else None,
    }
    if active is None or active.config is None:
        text = "no OCR worker has registered a configuration yet"
    else:
        cfg = active.config
        lines = [_describe(active)]
        lines += [f"  {k} = {v}" for k, v in sorted(cfg.params.items())]
        lines += [
            f"  model {name} sha256:{digest}" for name, digest in sorted(cfg.model_hashes.items())
        ]
        text = "\n".join(lines)
    if pinned is not None:
        text += f"\npinned: {pinned.digest} (workers started now run it)"
    emit(args, data, text)
    return Exit.OK


def show_history(args: argparse.Namespace, settings: Settings) -> int:
    entries = _registry(settings).history()
    data = [e.model_dump(mode="json") for e in entries]
    emit(args, data, "\n".join(map(_describe, entries)) or "no history yet")
    return Exit.OK


def rollback_config(args: argparse.Namespace, settings: Settings) -> int:
    registry = _registry(settings)
    previous = registry.previous()
    if previous is None:
        message = "no earlier configuration is recorded"
        return fail(args.json, Code.NOTHING_TO_ROLL_BACK, message, Exit.USAGE)
    return _pin(args, registry, previous)


def pin_config(args: argparse.Namespace, settings: Settings) -> int:
    registry = _registry(settings)
    entry = registry.find(args.ref)
    if entry is None:
        message = f"no activated configuration {args.ref!r}"
        return fail(args.json, Code.UNKNOWN_CONFIG, message, Exit.USAGE)
    return _pin(args, registry, entry)


def _pin(args: argparse.Namespace, registry: ConfigRegistry, entry: ConfigEntry) -> int:
    pinned = registry.pin(entry, _actor(), args.reason)
    text = f"pinned {pinned.digest} (#{entry.seq}); restart OCR workers to run it"
    emit(args, pinned.model_dump(mode="json"), text)
    return Exit.OK


def unpin_config(args: argparse.Namespace, settings: Settings) -> int:
    entry = _registry(settings).unpin(_actor(), args.reason)
    emit(args, entry.model_dump(mode="json"), "unpinned; workers follow their settings")
    return Exit.OK
