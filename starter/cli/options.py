"""What the options every command shares mean for each command, and the option types.

``--tenant`` comes with every command (the registry's ``common`` parent), but a
tenant means something else to ``submit`` than to ``audit verify``, and nothing
to ``up``: :data:`TENANT_HELP` says it per command, :class:`Help` prints that
line (or leaves the option out), and the registry's parser refuses it where it
means nothing. Imported by ``custody --help``, so it imports nothing heavy.
"""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path
from typing import Any

GENERIC_TENANT = "tenant the document belongs to"
#: Every argument naming one document (``starter.cli.prefixes`` resolves the short ones).
DOCUMENT_HELP = "the document's SHA-256 (8+ hex characters do)"
#: The parser destinations that hold documents' SHA-256s; ``document`` may also be a file.
DOCUMENT_DESTS = ("sha256", "document", "documents")

_DOC = "the tenant the document belongs to (none: submitted without a tenant)"
_DOCS = "the tenant the documents belong to (none: submitted without a tenant)"

#: What ``--tenant`` means for each command (its words after ``custody``); None: nothing,
#: so the command refuses it. A command missing here keeps the generic line.
TENANT_HELP: dict[str, str | None] = {
    "up": None,
    "down": None,
    "submit": "the tenant submitting them: their IDs and stored objects are its own",
    "status": _DOC,
    "result": _DOC,
    "ls": "list this tenant's documents (none: those submitted without a tenant)",
    **dict.fromkeys(
        ("bench ocr", "bench intake", "bench fields", "bench redaction", "bench abuse"), None
    ),
    **dict.fromkeys(("bench preview", "bench scale", "bench fairness", "bench egress"), None),
    "verify": _DOCS,
    "audit verify": "only this tenant's log (default: every tenant's, each on its own)",
    "audit log": _DOC,
    "audit seal": "only this tenant's log (default: every tenant's)",
    "evidence show": _DOC,
    "evidence export": _DOC,
    "evidence find": "search this tenant's evidence (needed by --field)",
    "evidence keys": None,
    "quarantine ls": "this tenant's quarantined documents",
    "review ls": "this tenant's documents in review (default: every tenant's)",
    "review show": _DOC,
    "review resolve": _DOC,
    "quarantine release": _DOC,
    "quarantine reject": _DOC,
    "fields policy set": "the tenant whose fields policy this becomes",
    "fields policy show": "the tenant whose fields policy to show",
    "retention sweep": None,
    "retention approve": _DOC,
    "retention apply": "only this tenant's approvals (default: every tenant with some)",
    "deletions ls": "only requests to delete this tenant's evidence (default: every tenant's)",
    "deletions approve": None,
    "tenants add": None,
    **dict.fromkeys(("tenants keys add", "tenants keys ls", "tenants keys revoke"), None),
    **dict.fromkeys(("operators add", "operators ls", "operators revoke"), None),
    "operators bootstrap": None,
    "tenants ls": None,
    "tenants revoke": None,
    "serve": None,
    **dict.fromkeys(("admission pause", "admission resume", "admission status"), None),
    "admission manual": None,
    "admission release": "the tenant the parked document was uploaded for",
    **dict.fromkeys(("pools set", "pools reset", "pools status"), None),
    "chaos": None,
    "keys init": None,
    "keys rotate": "add a new key-encryption key version for this tenant, not a payload key",
    "keys list": None,
    "keys shred": None,
    "codec-server": None,
    **dict.fromkeys(("ocr config", "ocr config history", "ocr config rollback"), None),
    **dict.fromkeys(("ocr config pin", "ocr config unpin"), None),
    "recipients add": "the tenant that may release to this recipient",
    "recipients ls": "this tenant's recipients",
    "recipients revoke": "the tenant the recipient is registered for",
    "policies add": "the tenant the policy is for (its versions are its own)",
    "policies ls": "this tenant's policies, beside the built-in ones",
    "policies show": "the tenant whose policy to show",
    "release": _DOCS,
    "egress ls": "this tenant's egress events",
    "egress verify": "the tenant the release belongs to",
    "egress identify": "the tenant asking: only its own releases are named",
    "egress report": "the tenant whose patient this is (its own field index)",
    "release approve": "the tenant the release belongs to",
    "bench ledger": None,
    "witness serve": None,
    "witness key": None,
    "witness trust": None,
    "redact": _DOC,
    "ui": "add a link to this tenant's documents",
}

GENERIC_TENANT = "tenant the document belongs to"
#: Every argument naming one document (``starter.cli.prefixes`` resolves the short ones).
DOCUMENT_HELP = "the document's SHA-256 (8+ hex characters do)"
#: The parser destinations that hold documents' SHA-256s; ``document`` may also be a file.
DOCUMENT_DESTS = ("sha256", "document", "documents")


def positive(text: str) -> int:
    """An ``int`` option that must be at least 1 (``--limit``, ``--trials``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def purpose(text: str) -> str:
    """A ``--purpose`` of disclosure: one printable line of at most 200 characters."""
    from custody.egress import check_purpose

    try:
        return check_purpose(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: The help of every ``--purpose`` on a command that hands content out.
PURPOSE_HELP = "purpose of disclosure recorded with the read (default: the tenant policy's)"


def readable_file(text: str) -> str:
    """A path option or argument that must name a readable file, checked before anything runs.

    Raises ``OSError`` (not argparse's type error) on purpose: the CLI answers a
    missing file NOT_FOUND (exit 5), a folder or an unreadable one USAGE (exit 2).
    """
    path = Path(text)
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text)
    if not path.is_file():
        raise IsADirectoryError(errno.EISDIR, "not a file", text)
    if not os.access(path, os.R_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), text)
    return text


def _words(prog: str) -> str:
    """``custody audit verify`` -> ``audit verify``: the key of :data:`TENANT_HELP`."""
    return prog.partition(" ")[2]


def tenant_means_nothing(prog: str) -> bool:
    """Whether the command ``prog`` (``custody audit verify``) has no use for ``--tenant``."""
    return TENANT_HELP.get(_words(prog), "") is None


def _hidden(prog: str, action: argparse.Action) -> bool:
    return "--tenant" in action.option_strings and tenant_means_nothing(prog)


class Help(argparse.HelpFormatter):
    """Help with ``--tenant`` said as this command means it, or left out where it means nothing."""

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: Any = None) -> None:
        kept = [a for a in actions if not _hidden(self._prog, a)]
        super().add_usage(usage, kept, groups, prefix)

    def add_arguments(self, actions: Any) -> None:
        super().add_arguments([a for a in actions if not _hidden(self._prog, a)])

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if "--tenant" in action.option_strings:
            return TENANT_HELP.get(_words(self._prog)) or action.help
        return action.help
