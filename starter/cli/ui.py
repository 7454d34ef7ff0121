"""``custody ui [--open] [--code CODE] [--tenant T] [--url URL]``: Temporal UI links, filled in.

In the UI's list every document shows as "Completed", rejected and quarantined
ones too: what a person must look at is in Custody's search attributes
(``custody.queues``). Each link opens the workflow list filtered by one
visibility query: quarantined, rejected, one tenant's, one code's, and the
documents still running past the intake SLO (the oldest; the SQL visibility
store cannot sort, so "older than the SLO" stands in for "oldest first").
Values are checked before they enter a query: a tenant as ``custody.ids``
allows, a code as upper snake case, so nothing can close the quotes.
"""

from __future__ import annotations

import argparse
import re
import webbrowser
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from custody.egress import RELEASE_WORKFLOW_NAME
from custody.errors import DocumentRejected, UsageError
from custody.ids import check_tenant
from custody.queues import SA_REASON, SA_STATE, SA_TENANT, WORKFLOW_NAME
from custody.settings import Settings
from starter.cli.output import Exit, emit
from starter.cli.registry import add_command

_CODE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_DOCS = f"WorkflowType = '{WORKFLOW_NAME}'"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(sub, "ui", parents=[common])
    p.add_argument("--code", default=None, help="a reject or quarantine code, e.g. PAGE_LIMIT")
    p.add_argument("--url", default=None, help="the UI's address (default: localhost UI port)")
    p.add_argument("--open", action="store_true", help="open the first link in a browser")
    p.set_defaults(handler=_ui)


def queries(settings: Settings, tenant: str | None, code: str | None) -> dict[str, str]:
    """Name -> visibility query; by tenant and by code only when one is given."""
    overdue = datetime.now(UTC) - timedelta(seconds=settings.intake_slo_s)
    found = {
        "quarantined": f"{_DOCS} AND {SA_STATE} = 'quarantined'",
        "rejected": f"{_DOCS} AND {SA_STATE} = 'rejected'",
        "oldest_running": (
            f"{_DOCS} AND ExecutionStatus = 'Running' "
            f"AND StartTime < '{overdue.isoformat(timespec='seconds')}'"
        ),
        "releases_failed": f"WorkflowType = '{RELEASE_WORKFLOW_NAME}' AND {SA_STATE} = 'failed'",
    }
    if tenant is not None:
        try:
            check_tenant(tenant)
        except DocumentRejected as err:
            raise UsageError(detail=f"--tenant: {err.detail}") from None
        found["by_tenant"] = f"{_DOCS} AND {SA_TENANT} = '{tenant}'"
    if code is not None:
        if not _CODE.match(code):
            raise UsageError(detail="--code must be an upper-case code such as PAGE_LIMIT")
        found["by_code"] = f"{_DOCS} AND {SA_REASON} = '{code}'"
    return found


def link(base: str, namespace: str, query: str) -> str:
    return f"{base.rstrip('/')}/namespaces/{quote(namespace)}/workflows?query={quote(query)}"


def _ui(args: argparse.Namespace, settings: Settings) -> int:
    base = args.url or f"http://localhost:{settings.temporal_ui_port}"
    found = queries(settings, args.tenant, args.code)
    links = {
        name: {"query": q, "url": link(base, settings.temporal_namespace, q)}
        for name, q in found.items()
    }
    width = max(len(n) for n in links)
    text = "\n".join(f"{name:<{width}}  {item['url']}" for name, item in links.items())
    if args.open:
        # The narrowest view asked for: a code, else a tenant, else quarantined.
        first = next(n for n in ("by_code", "by_tenant", "quarantined") if n in links)
        webbrowser.open(links[first]["url"])
    emit(args, {"ui": base, "namespace": settings.temporal_namespace, "links": links}, text)
    return Exit.OK
