"""The ``custody`` commands: one table, and each command's module imported only when it runs.

``custody --help`` is printed from :data:`COMMANDS` alone. ``custody NAME ...``
imports NAME's module, whose ``register(sub, common)`` adds its parser (with
:func:`add_command`) and sets ``handler=fn(args, settings) -> int`` on each
leaf; every other command stays a stub that only lists its help. So
``custody status`` loads neither OCR, benchmark nor chaos code, and a command
whose optional package is missing fails alone, with a coded error.

Every command shares ``--json`` and ``--tenant`` (``common``); what
``--tenant`` means differs by command (:data:`starter.cli.options.TENANT_HELP`),
and a command it means nothing to refuses it (exit 2) and does not list it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from custody.errors import ConfigurationError, UsageError
from custody.extras import EXTRAS, missing
from custody.settings import Settings
from starter.cli.options import (
    DOCUMENT_DESTS,
    DOCUMENT_HELP,
    GENERIC_TENANT,
    Help,
    tenant_means_nothing,
)
from starter.cli.output import stdout

if TYPE_CHECKING:
    from starter.client.connect import CustodyClient

DESCRIPTION = "``custody``: the command line for operators and scripts."

#: command -> (module whose ``register`` adds it, one-line help). A module may
#: add several commands; each has its line here, in the order ``--help`` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "up": ("starter.cli.stack", "start the embedded stack"),
    "down": ("starter.cli.stack", "stop the embedded stack"),
    "submit": ("starter.cli.documents", "submit documents"),
    "status": ("starter.cli.documents", "state of one document"),
    "result": ("starter.cli.documents", "published text of one document"),
    "ls": ("starter.cli.documents", "documents known, newest first"),
    "bench": ("starter.cli.bench", "benchmarks (ratios measured side by side)"),
    "verify": ("starter.cli.evidence", "replay-verify published documents"),
    "audit": ("starter.cli.audit", "the audit ledger: verify, log, seal"),
    "evidence": ("starter.cli.evidence", "signed records and bundles"),
    "quarantine": ("starter.cli.quarantine", "review quarantined documents"),
    "review": ("starter.cli.review", "documents waiting for a person: list, show, resolve"),
    "fields": ("starter.cli.fields", "a tenant's fields policy: types, languages, rules"),
    "retention": ("starter.cli.retention", "expire scratch; delete evidence after sign-off"),
    "deletions": ("starter.cli.deletions", "two-person deletions: requests, a second approval"),
    "tenants": ("starter.cli.tenants", "tenants and their API keys"),
    "operators": ("starter.cli.operators", "the people who decide: identities and their keys"),
    "serve": ("starter.cli.serve", "run the HTTP intake edge"),
    "admission": ("starter.cli.admission", "pause, resume or inspect admission control"),
    "pools": ("starter.cli.pools", "live concurrency limits of the OCR and I/O pools"),
    "chaos": ("starter.cli.chaos", "fault-injection scenarios"),
    "keys": ("starter.cli.keys", "manage encryption keys (never printed)"),
    "codec-server": ("starter.cli.codec", "remote codec for the Web UI"),
    "ocr": ("starter.cli.ocr_config", "the OCR stage's configuration"),
    "recipients": ("starter.cli.recipients", "who releases may go to"),
    "policies": ("starter.cli.policies", "what releases may include (versioned)"),
    "release": ("starter.cli.release", "release published documents to a recipient"),
    "egress": ("starter.cli.egress", "what left Custody: events, receipts, found files"),
    "redact": ("starter.cli.redact", "a published document's redacted view, checked and signed"),
    "ui": ("starter.cli.ui", "Temporal UI links: quarantined, rejected, by tenant or code, oldest"),
    "witness": ("starter.cli.witness", "an independent witness of the audit ledger (serve, key)"),
}

Handler = Callable[[argparse.Namespace, Settings], int]

_OURS = frozenset({"custody", "starter", "workers", "workflows", "activities"})
#: Set while the command line is this process's own (the console script): only then
#: may a command take over its signals and stop every process below it on the way out.
_OWNS_PROCESS: ContextVar[bool] = ContextVar("custody_owns_process", default=False)


class Parser(argparse.ArgumentParser):
    """Raises a bad command line as :class:`UsageError`, so ``--json`` still answers JSON."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)  # for people; stdout keeps the one JSON document
        raise UsageError(detail=f"{self.prog}: {message}")

    def parse_args(self, *args: Any, **kwargs: Any) -> Any:
        parsed = super().parse_args(*args, **kwargs)
        prog = getattr(parsed, "command_prog", None)
        given = getattr(parsed, "tenant", None) is not None
        if prog and given and tenant_means_nothing(prog):
            raise UsageError(detail=f"{prog}: --tenant means nothing here; leave it out")
        return parsed

    def _print_message(self, message: str, file: Any = None) -> None:
        # --help goes where the command's answer goes (captured by in-process callers),
        # and a reader gone is not swallowed here: the CLI answers it as everywhere (141).
        if message:
            (stdout() if file in (None, sys.stdout) else file).write(message)


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for this command line: every command listed, only the one named built."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--tenant", default=None, help=GENERIC_TENANT)
    parser = Parser(prog="custody", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    # The top level has no options but --help, so the first word is the command.
    named = next((a for a in argv if not a.startswith("-")), None)
    if named in COMMANDS:
        load(COMMANDS[named][0], named).register(sub, common)
        for leaf in _leaves(sub):
            leaf.set_defaults(command_prog=leaf.prog)
            _say_documents(leaf)
    for name, (_, text) in COMMANDS.items():
        if name not in (sub.choices or {}):
            sub.add_parser(name, help=text)
    return parser


def _say_documents(parser: argparse.ArgumentParser) -> None:
    """Help for a document argument a command left unexplained: prefixes work there too."""
    for action in parser._actions:
        if action.dest in DOCUMENT_DESTS and not action.option_strings and not action.help:
            action.help = DOCUMENT_HELP


def _leaves(sub: Any) -> list[argparse.ArgumentParser]:
    """Every parser under a subparsers action that runs a command (has a handler)."""
    found: list[argparse.ArgumentParser] = []
    for child in dict.fromkeys(sub.choices.values()):  # aliases name one parser twice
        if child.get_default("handler") is not None:
            found.append(child)
        for action in child._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += _leaves(action)
    return found


def add_command(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """Add command ``name`` with its help from the table (``kwargs`` as ``add_parser``)."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=COMMANDS[name][1], **kwargs)
    return parser


def load(module: str, command: str) -> ModuleType:
    """Import a command's module; a third-party package it needs is a configuration error,
    EXTRA_MISSING with the install command when an extra provides it (custody.extras)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        top = (err.name or "").split(".")[0]
        if top in _OURS:
            raise
        extra = next((name for name, mods in EXTRAS.items() if top in mods), None)
        if extra is not None:
            raise missing(extra, f"custody {command}", top) from None
        raise ConfigurationError(
            detail=f"custody {command} needs the Python package {err.name!r}; it is not installed"
        ) from err


def with_client(
    fn: Callable[[argparse.Namespace, CustodyClient], Coroutine[Any, Any, int]],
    service: str = "custody-client",
) -> Handler:
    """Adapt ``async fn(args, client)`` to a handler that connects first (as ``service``)."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        async def go() -> int:
            # Here, not at the top: every command imports the registry, few connect.
            from starter.client.connect import CustodyClient

            try:
                client = await CustodyClient.connect(settings, service=service)
            except RuntimeError as err:  # the SDK's connection failure
                raise ConnectionError(
                    f"cannot reach Temporal at {settings.temporal_address}"
                ) from err
            return await fn(args, client)

        return asyncio.run(go())

    return run


def add_all_tenants(parser: argparse.ArgumentParser, text: str | None = None) -> None:
    """``--all-tenants`` on a listing: every tenant's documents, for operators."""
    help_text = text or "every tenant's documents (operators only)"
    parser.add_argument("--all-tenants", action="store_true", help=help_text)


def every_tenant(args: argparse.Namespace) -> bool:
    """Whether this listing spans every tenant; a contradictory request is a usage error.

    A guard against an operator's mistake, not an authorisation boundary.
    """
    every = bool(args.all_tenants)
    if every and args.tenant:
        raise UsageError(detail="give --tenant T or --all-tenants, not both")
    return every


@contextmanager
def owning_process() -> Iterator[None]:
    """Run command lines as this process's own: :func:`supervised` commands then own
    their children's lifetimes (never inside a test or another program calling ``run``)."""
    token = _OWNS_PROCESS.set(True)
    try:
        yield
    finally:
        _OWNS_PROCESS.reset(token)


def supervised(handler: Handler) -> Handler:
    """A command that starts processes: Ctrl-C and SIGTERM stop them all, exit 130/143.

    See :mod:`starter.local.processes`; called in-process, the handler runs as is.
    """

    def run(args: argparse.Namespace, settings: Settings) -> int:
        if not _OWNS_PROCESS.get():
            return handler(args, settings)
        from starter.local.processes import supervised as supervise

        with supervise() as state:
            try:
                return handler(args, settings)
            except KeyboardInterrupt:  # what SIGTERM becomes too
                print(f"custody: stopped by signal {state.status - 128}", file=sys.stderr)
                return state.status

    return run
