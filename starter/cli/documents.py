"""``custody submit|status|result|ls``: documents in, states and text out."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from pathlib import Path
from typing import Any

from custody import ids
from custody.errors import AdmissionRejected, CustodyError
from custody.models import DocState, DocumentResult
from starter.cli.options import PURPOSE_HELP, positive, purpose, readable_file
from starter.cli.output import Exit, emit, for_state, stdout
from starter.cli.progress import Progress
from starter.cli.registry import add_all_tenants, add_command, every_tenant, with_client
from starter.cli.results import result
from starter.client.connect import CustodyClient
from starter.client.read import list_documents
from starter.client.read import status as api_status
from starter.client.submit import Submission, wait
from starter.client.submit import submit as api_submit

_COLUMNS = ("sha256", "state", "pages", "confidence", "code", "result")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    s = add_command(sub, "submit", parents=[common])
    s.add_argument(
        "paths", nargs="+", type=readable_file, metavar="PATH", help="PDF, PNG, JPEG or TIFF files"
    )
    s.add_argument("--source-id", default=None, help="the sending system's id for them, e.g. fax-7")
    s.add_argument(
        "--type",
        dest="document_type",
        default=None,
        help="the documents' type: form, receipt, referral or a configured one such as "
        "discharge (custody fields policy show); else Custody classifies each",
    )
    s.add_argument("--wait", action="store_true", help="wait for each to be published or refused")
    s.add_argument(
        "--timeout", type=float, default=1800.0, help="with --wait: seconds to wait at most"
    )
    s.set_defaults(handler=with_client(submit))
    st = add_command(sub, "status", parents=[common])
    st.add_argument("document", help="its SHA-256 (8+ hex characters do), or the file itself")
    st.set_defaults(handler=with_client(status))
    r = add_command(sub, "result", parents=[common])
    r.add_argument("sha256", help="the document's SHA-256 (8+ hex characters do)")
    r.add_argument("--purpose", type=purpose, default=None, metavar="TEXT", help=PURPOSE_HELP)
    r.set_defaults(handler=with_client(result))
    ls_ = add_command(sub, "ls", parents=[common])
    ls_.add_argument(
        "--state",
        default=None,
        choices=[state.value for state in DocState],
        help="only documents in this state (published, rejected, quarantined end a document)",
    )
    ls_.add_argument(
        "--limit", type=positive, default=100, metavar="N", help="at most N documents (100)"
    )
    add_all_tenants(ls_, "every tenant's documents")
    ls_.set_defaults(handler=with_client(ls))


async def submit(args: argparse.Namespace, client: CustodyClient) -> int:
    rows: list[dict[str, Any]] = []
    pending: list[tuple[int, Submission]] = []
    for path in args.paths:
        try:
            sub = await api_submit(
                client,
                Path(path),
                source_id=args.source_id,
                tenant=args.tenant,
                document_type=args.document_type,
            )
        except AdmissionRejected as err:  # not now: the same answer the edge gives
            rows.append(_refused_row(path, err))
            continue
        except CustodyError as err:  # refused before a workflow existed
            rows.append({"input": path, "state": "rejected", "code": str(err.code)})
            continue
        rows.append(_submission_row(path, sub, client))
        if args.wait and sub.state is not DocState.PUBLISHED:
            pending.append((len(rows) - 1, sub))
    if pending:
        await _wait_all(client, pending, rows, args.timeout)
    _print_rows(args, rows, client)
    return max((for_state(str(r.get("state"))) for r in rows), default=Exit.OK)


def _refused_row(path: str, err: AdmissionRejected) -> dict[str, Any]:
    # Nothing was uploaded: the caller may try again after ``retry_after`` seconds.
    return {
        "input": path,
        "state": "refused",
        "code": str(err.code),
        "retry_after": round(err.retry_after),
    }


def _submission_row(path: str, sub: Submission, client: CustodyClient) -> dict[str, Any]:
    row: dict[str, Any] = {
        "input": path,
        "sha256": sub.sha256,
        "tenant": sub.tenant,
        "state": sub.state.value,
        "deduplicated": sub.deduplicated,
        "workflow_id": sub.workflow_id,
    }
    if sub.record is not None:
        row.update(
            pages=sub.record.pages,
            confidence=sub.record.mean_confidence,
            result=_where(client, ids.record_key(sub.sha256, sub.tenant)),
        )
    return row


async def _wait_all(
    client: CustodyClient,
    pending: list[tuple[int, Submission]],
    rows: list[dict[str, Any]],
    timeout: float,
) -> None:
    bar = Progress(len(pending))
    tasks: dict[asyncio.Future[DocumentResult], int] = {
        asyncio.ensure_future(wait(client, s.sha256, tenant=s.tenant)): i for i, s in pending
    }
    done_all, still = await bar.track(tasks, timeout)
    for task in done_all:
        rows[tasks[task]].update(_result_row(task.result(), client))
    for task in still:
        task.cancel()
        rows[tasks[task]]["state"] = "running"


def _result_row(res: DocumentResult, client: CustodyClient) -> dict[str, Any]:
    return {
        "state": res.state.value,
        "pages": res.pages,
        "confidence": res.mean_confidence,
        "code": res.code,
        "attempts": res.attempts,
        "result": _where(client, res.record_key) if res.record_key else None,
    }


def _where(client: CustodyClient, key: str) -> str | None:
    """Where a person can open the record: a plain store's file or S3 object; None when
    sealed (the file there is ciphertext; ``custody result`` prints the text)."""
    from custody.stores.sealed import SealedStore  # loaded already: the client opened it

    if isinstance(client.store, SealedStore):
        return None
    s = client.settings
    if s.store == "s3":
        return f"s3://{s.s3_bucket}/{s.s3_prefix}{key}"
    return str(s.objects_dir.resolve() / key)


def _result_hint(row: dict[str, Any]) -> str | None:
    """The command that prints a published row's text, exactly as it can be typed."""
    if row.get("state") != DocState.PUBLISHED.value:
        return None
    tenant = f" --tenant {row['tenant']}" if row.get("tenant") else ""
    return f"custody result {row['sha256'][:12]}{tenant}"


def _print_rows(
    args: argparse.Namespace, rows: list[dict[str, Any]], client: CustodyClient
) -> None:
    ui = f"http://localhost:{client.settings.temporal_ui_port}"
    if args.json:
        body = {"documents": rows, "temporal_ui": ui}
        print(json.dumps(body, default=str, indent=2), file=stdout())
        return
    table = [("SHA256", "STATE", "PAGES", "CONF", "CODE", "RESULT / INPUT")]
    for r in rows:
        conf = r.get("confidence")
        table.append(
            (
                (r.get("sha256") or "-")[:12],
                str(r.get("state")),
                str(r.get("pages", "-")),
                _two_places_down(conf) if isinstance(conf, float) else "-",
                r.get("code") or "-",
                _result_hint(r) or r["input"],
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(_COLUMNS) - 1)]
    for cells in table:
        line = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)) + "  " + cells[-1]
        print(line, file=stdout())
    print(f"\nTemporal UI: {ui}", file=stdout())


def _two_places_down(conf: float) -> str:
    """A confidence to two places, rounded down: an OCR mean of 0.996 reads 0.99, so the
    table never shows 1.00 for what was not certain."""
    return f"{math.floor(conf * 100) / 100:.2f}"


async def status(args: argparse.Namespace, client: CustodyClient) -> int:
    # ``document`` is a SHA-256 by now: a path or a prefix was resolved before (prefixes).
    view = await api_status(client, args.document, args.tenant)
    data = view.model_dump(mode="json")
    lines = [f"{k}: {v}" for k, v in data.items() if k != "transitions"]
    lines += [f"  {t['at']}  {t['state']}" for t in data["transitions"]]
    emit(args, data, "\n".join(lines))
    return Exit.OK if view.running else for_state(view.state.value)


async def ls(args: argparse.Namespace, client: CustodyClient) -> int:
    rows = await list_documents(
        client,
        state=args.state,
        tenant=args.tenant,
        limit=args.limit,
        all_tenants=every_tenant(args),
    )
    data = [r.model_dump(mode="json") for r in rows]
    text = "\n".join(
        f"{r.sha256[:12]}  {r.state:<12} {r.code or '-':<18} {r.tenant or '-':<12} "
        f"{r.started_at:%Y-%m-%d %H:%M:%S}"
        for r in rows
    )
    emit(args, data, text or "no documents")
    return Exit.OK
