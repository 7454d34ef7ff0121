"""How every ``custody`` command answers, and every exit status it can end with.

With ``--json`` a command prints exactly one JSON document on stdout: its
answer, or ``{"error": CODE, "message": ...}``. Without it, people get text,
and a failure is one line on stderr, ``custody: CODE: message``. Expected
failures never print a traceback; :func:`failure` decides what each exception
means for the exit status, so scripts can branch on it.

Everything a command prints goes to :func:`stdout`: ``sys.stdout``, unless a
caller in this process captured the command's answer (:func:`captured`, how
the tests run a command in-process). A context variable rather than swapping
``sys.stdout``, so workers logging in the same process never land in it.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from pydantic import ValidationError

from custody.errors import (
    QUARANTINE_CODES,
    REJECT_CODES,
    Code,
    ConfigurationError,
    CustodyError,
    DocumentRejected,
    IdentityRefused,
    NotFound,
    ObjectMissing,
    Quarantined,
    ReviewRefused,
    StoreUnavailable,
    UsageError,
)

if TYPE_CHECKING:
    from starter.evidence.verify.report import Report


class Exit(IntEnum):
    """Every exit status of ``custody``. With several documents the worst (highest) wins."""

    #: Published, or the command did what it was asked.
    OK = 0
    #: A harness or benchmark found a problem (chaos violations, bench bounds), or a bug.
    FAILED = 1
    #: The command line cannot be run: bad or contradictory arguments.
    USAGE = 2
    REJECTED = 3
    QUARANTINED = 4
    #: No such document (or tenant, or parked upload).
    NOT_FOUND = 5
    #: Temporal or the object store cannot be reached.
    UNREACHABLE = 6
    #: ``--wait`` gave up while documents were still running.
    STILL_RUNNING = 7
    #: ``custody verify`` or ``audit verify`` found a check that FAILs.
    VERIFY_FAILED = 8
    #: The deployment is misconfigured: settings, keys, a missing package.
    CONFIG = 9
    #: The document waits in ``review`` for a person's decision (``custody review``).
    REVIEW = 10
    #: The document's workflow was cancelled: its own outcome, ``cancelled``.
    CANCELLED = 11
    #: Who acts is refused: no identity, an unknown, revoked or expired one, a role
    #: it lacks, a bad signature, or a decision the document cannot take now.
    DENIED = 12
    #: Stopped by SIGINT (Ctrl-C) or SIGTERM, after stopping what it started: 128 + signal.
    INTERRUPTED = 130
    TERMINATED = 143
    #: The reader of stdout went away (``custody ls | head -1``): quietly, as a
    #: command killed by SIGPIPE (128 + 13).
    PIPE_CLOSED = 141


_STDOUT: ContextVar[TextIO | None] = ContextVar("custody_cli_stdout", default=None)


def stdout() -> TextIO:
    """Where this command's answer goes: the captured stream, else ``sys.stdout``."""
    return _STDOUT.get() or sys.stdout


@contextmanager
def captured(stream: TextIO) -> Iterator[None]:
    """Send what commands print in this context (and threads it starts) to ``stream``."""
    token = _STDOUT.set(stream)
    try:
        yield
    finally:
        _STDOUT.reset(token)


_BY_STATE = {
    "accepted": Exit.OK,
    "published": Exit.OK,
    "rejected": Exit.REJECTED,
    "quarantined": Exit.QUARANTINED,
    "running": Exit.STILL_RUNNING,
    "review": Exit.REVIEW,
    "cancelled": Exit.CANCELLED,
    #: Admission said not now (paused, a rate, the bounds): nothing was uploaded.
    "refused": Exit.FAILED,
}


def for_state(state: str) -> Exit:
    """The exit status a document's state stands for (an unknown state: not found)."""
    return _BY_STATE.get(state, Exit.NOT_FOUND)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """A command's answer: ``data`` as one JSON document with ``--json``, else ``text``."""
    print(rendered(args, data, text), file=stdout())


_Row = TypeVar("_Row")


def emit_rows(
    args: argparse.Namespace, rows: Sequence[_Row], line: Callable[[_Row], str], empty: str
) -> int:
    """A listing: ``rows`` as JSON with ``--json``, else a ``line`` each, or ``empty``."""
    emit(args, rows, "\n".join(line(r) for r in rows) or empty)
    return Exit.OK


def emit_reports(args: argparse.Namespace, reports: list[Report]) -> int:
    """Verification reports, each check under its subject; VERIFY_FAILED if any failed."""
    ok = all(r.ok for r in reports)
    passed = sum(r.ok for r in reports)
    data: dict[str, Any] = {"ok": ok, "passed": passed, "failed": len(reports) - passed}
    data["reports"] = [r.model_dump() for r in reports]
    lines = []
    for r in reports:
        lines.append(f"{'PASS' if r.ok else 'FAIL'}  {r.subject}")
        lines += [f"  {'ok  ' if c.ok else 'FAIL'} {c.name} {c.detail}".rstrip() for c in r.checks]
    lines.append(f"{passed} passed, {len(reports) - passed} failed")
    emit(args, data, "\n".join(lines))
    return Exit.OK if ok else Exit.VERIFY_FAILED


def rendered(args: argparse.Namespace, data: Any, text: str) -> str:
    """Exactly what ``emit`` prints (less its newline): what an egress event hashes."""
    as_json = getattr(args, "json", False)  # a parser built without the common options
    return json.dumps(data, default=str, indent=2) if as_json else text


def error(as_json: bool, code: Code, message: str, extra: dict[str, Any] | None = None) -> None:
    """A failure: one JSON document on stdout (``extra`` beside its code), or one line on stderr."""
    if as_json:
        print(json.dumps({"error": code, "message": message, **(extra or {})}), file=stdout())
    else:
        print(f"custody: {code}: {message}", file=sys.stderr)


def fail(as_json: bool, code: Code, message: str, status: Exit) -> Exit:
    """Report a failure a command found itself, and return its exit status."""
    error(as_json, code, message)
    return status


def failure(err: BaseException) -> tuple[Exit, Code, str]:
    """The exit status, code and message for an exception a command let out."""
    if isinstance(err, NotFound | ObjectMissing):
        return Exit.NOT_FOUND, Code.NOT_FOUND, f"no document {err}"
    if isinstance(err, FileNotFoundError):  # a path the command line named
        return Exit.NOT_FOUND, Code.NOT_FOUND, f"no such file: {err.filename}"
    if isinstance(err, IsADirectoryError | NotADirectoryError | PermissionError):
        return Exit.USAGE, Code.USAGE, f"{err.strerror}: {err.filename}"
    if isinstance(err, UsageError):
        return Exit.USAGE, err.code, err.detail
    if isinstance(err, ConfigurationError):
        return Exit.CONFIG, err.code, err.detail
    if isinstance(err, IdentityRefused | ReviewRefused):
        return Exit.DENIED, err.code, err.detail
    if isinstance(err, ValidationError):  # a CUSTODY_* variable is malformed
        return Exit.CONFIG, Code.CONFIGURATION, _invalid_settings(err)
    if _unreachable(err):
        return Exit.UNREACHABLE, Code.UNREACHABLE, f"{err}; is the stack up? (custody up --detach)"
    if isinstance(err, DocumentRejected) or (
        isinstance(err, CustodyError) and err.code in REJECT_CODES
    ):
        return Exit.REJECTED, err.code, err.detail
    if isinstance(err, Quarantined) or (
        isinstance(err, CustodyError) and err.code in QUARANTINE_CODES
    ):
        return Exit.QUARANTINED, err.code, err.detail
    if isinstance(err, CustodyError):
        return Exit.FAILED, err.code, err.detail
    # Not an error Custody raises on purpose: a bug, so the traceback helps (on stderr).
    traceback.print_exception(err, file=sys.stderr)
    return Exit.FAILED, Code.INTERNAL, type(err).__name__


def report(err: BaseException, as_json: bool) -> Exit:
    """Print ``err`` as a coded failure; its exit status."""
    status, code, message = failure(err)
    matches = getattr(err, "matches", None)  # an ambiguous prefix lists its documents
    error(as_json, code, message, {"matches": matches} if matches else None)
    return status


def _unreachable(err: BaseException) -> bool:
    """Only a real connection failure: the store, the network, or Temporal's RPC saying so."""
    if isinstance(err, BrokenPipeError):  # a reader that went away, not a server
        return False
    if isinstance(err, StoreUnavailable | ConnectionError | TimeoutError):
        return True
    if isinstance(err, CustodyError):
        return err.code is Code.STORE_UNAVAILABLE
    rpc = sys.modules.get("temporalio.service")  # loaded by every command that talks RPC
    if rpc is not None and isinstance(err, rpc.RPCError):
        down = (rpc.RPCStatusCode.UNAVAILABLE, rpc.RPCStatusCode.DEADLINE_EXCEEDED)
        return err.status in down
    return False


def _invalid_settings(err: ValidationError) -> str:
    # Field names and pydantic's reason only: an input value may be a secret.
    fields = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors())
    return f"invalid settings ({fields})"
