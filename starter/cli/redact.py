"""``custody redact SHA --policy P``: a published document's redacted view, made once and signed.

The view is made here, with the worker's settings, store and signing key:
the source is rendered in the sandboxed child, the removed boxes painted, a
fresh PDF built and checked by re-extraction and the configured OCR engine
(``activities.redact``). With ``--json`` it prints one object: ``sha256``,
``view_key``, ``view_sha256``, ``pdf_key``, ``pdf_sha256``, ``record_sha256``,
``policy``, ``policy_sha256``, ``regions`` (a count), ``sources`` (regions per
field or detector), ``check``, ``approved_by`` and ``event`` (the
``redaction_created`` ledger event's ``seq`` and ``hash``): ids, hashes and
counts, never the removed text. A view that fails its check is not stored:
``REDACTION_LEAK``, exit status 1; a document not published here, exit status 3.
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter
from typing import Any

from custody.errors import EgressRefused
from custody.settings import Settings
from starter.cli.output import Exit, emit, fail
from starter.cli.recipients import operator
from starter.cli.registry import add_command


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "redact", parents=[common])
    p.add_argument("sha256", metavar="SHA256")
    p.add_argument(
        "--policy", default="default", help="redaction policy: a built-in name or a JSON file"
    )
    p.add_argument("--by", default=None, help="who approves the redaction (default: OS user)")
    p.set_defaults(handler=_command)


def _command(args: argparse.Namespace, settings: Settings) -> int:
    from activities.engines.selection import build_engine
    from activities.redact.policy import load_redaction
    from activities.redact.service import Redactor
    from activities.scratch import StagingArea
    from custody import ids
    from custody.ledger.signing import signer_from_settings
    from custody.redactions import view_key
    from custody.stores import open_store

    policy = load_redaction(args.policy)
    sha = ids.check_sha256(args.sha256)
    store = open_store(settings)
    area = StagingArea(settings.staging_path)
    area.prepare()
    redactor = Redactor(
        store, signer_from_settings(settings), area, lambda: build_engine(settings), settings.limits
    )
    try:
        signed = redactor.redact(sha, args.tenant, policy, args.by or operator())
    except EgressRefused as err:  # not published here, or its evidence no longer hashes
        return fail(args.json, err.code, err.detail, Exit.REJECTED)
    key = view_key(sha, args.tenant, policy.sha256())
    view = signed.view
    body = {
        "sha256": view.sha256,
        "view_key": key,
        "view_sha256": hashlib.sha256(store.get(key)).hexdigest(),
        "pdf_key": view.pdf_key,
        "pdf_sha256": view.pdf_sha256,
        "record_sha256": view.record_sha256,
        "policy": view.policy,
        "policy_sha256": view.policy_sha256,
        "regions": len(view.entries),
        "sources": dict(Counter(e.source for e in view.entries)),
        "check": view.check.model_dump(),
        "approved_by": view.approved_by,
        "event": view.event.model_dump() if view.event else None,
    }
    text = f"redacted view of {sha[:12]}: {len(view.entries)} regions, pdf sha256 {view.pdf_sha256}"
    emit(args, body, text)
    return Exit.OK
