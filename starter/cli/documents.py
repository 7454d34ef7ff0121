"""``custody submit|status|result|ls``: documents in, states and text out."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from custody import ids
from custody.egress import EgressKind
from custody.errors import AdmissionRejected, CustodyError
from custody.fields import DocType
from custody.models import DocState, DocumentResult
from custody.state.egress import hand_out
from starter.cli.actor import operator
from starter.cli.output import Exit, emit, for_state, rendered
from starter.cli.registry import add_all_tenants, add_command, every_tenant, with_client
from starter.client.connect import CustodyClient
from starter.client.read import list_documents, stored_result
from starter.client.read import status as api_status
from starter.client.submit import Submission, wait
from starter.client.submit import submit as api_submit

_COLUMNS = ("sha256", "state", "pages", "confidence", "code", "result")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    s = add_command(sub, "submit", parents=[common])
    s.add_argument("paths", nargs="+")
    s.add_argument("--source-id", default=None)
    s.add_argument(
        "--type",
        dest="document_type",
        choices=[t.value for t in DocType],
        default=None,
        help="the documents' type (else Custody classifies each)",
    )
    s.add_argument("--wait", action="store_true", help="wait for terminal states")
    s.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait at most")
    s.set_defaults(handler=with_client(submit))
    st = add_command(sub, "status", parents=[common])
    st.add_argument("document", help="SHA-256 or a file path")
    st.set_defaults(handler=with_client(status))
    r = add_command(sub, "result", parents=[common])
    r.add_argument("sha256")
    r.set_defaults(handler=with_client(result))
    ls_ = add_command(sub, "ls", parents=[common])
    ls_.add_argument("--state", default=None)
    ls_.add_argument("--limit", type=int, default=100)
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
    bar = _Progress(len(pending))
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


def _where(client: CustodyClient, key: str) -> str:
    s = client.settings
    if s.store == "s3":
        return f"s3://{s.s3_bucket}/{s.s3_prefix}{key}"
    return str(s.objects_dir.resolve() / key)


def _print_rows(
    args: argparse.Namespace, rows: list[dict[str, Any]], client: CustodyClient
) -> None:
    ui = f"http://localhost:{client.settings.temporal_ui_port}"
    if args.json:
        print(json.dumps({"documents": rows, "temporal_ui": ui}, default=str, indent=2))
        return
    table = [("SHA256", "STATE", "PAGES", "CONF", "CODE", "RESULT / INPUT")]
    for r in rows:
        conf = r.get("confidence")
        table.append(
            (
                (r.get("sha256") or "-")[:12],
                str(r.get("state")),
                str(r.get("pages", "-")),
                f"{conf:.2f}" if isinstance(conf, float) else "-",
                r.get("code") or "-",
                r.get("result") or r["input"],
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(_COLUMNS) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    print(f"\nTemporal UI: {ui}")


class _Progress:
    """A one-line progress bar on stderr, shown only on a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.enabled = sys.stderr.isatty()

    async def track(
        self, tasks: dict[asyncio.Future[DocumentResult], int], timeout: float
    ) -> tuple[set[asyncio.Future[DocumentResult]], set[asyncio.Future[DocumentResult]]]:
        deadline = time.monotonic() + timeout
        done: set[asyncio.Future[DocumentResult]] = set()
        pending = set(tasks)
        while pending and time.monotonic() < deadline:
            self._draw(len(done))
            finished, pending = await asyncio.wait(
                pending,
                timeout=min(1.0, deadline - time.monotonic()),
                return_when=asyncio.FIRST_COMPLETED,
            )
            done |= finished
        self._draw(len(done))
        if self.enabled:
            sys.stderr.write("\n")
        return done, pending

    def _draw(self, done: int) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // max(self.total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} done")
        sys.stderr.flush()


async def status(args: argparse.Namespace, client: CustodyClient) -> int:
    sha256 = _sha_of(args.document)
    view = await api_status(client, sha256, args.tenant)
    data = view.model_dump(mode="json")
    lines = [f"{k}: {v}" for k, v in data.items() if k != "transitions"]
    lines += [f"  {t['at']}  {t['state']}" for t in data["transitions"]]
    emit(args, data, "\n".join(lines))
    return Exit.OK if view.running else for_state(view.state.value)


def _sha_of(document: str) -> str:
    """A SHA-256 as given, or the SHA-256 of the file at that path."""
    if len(document) == 64 and all(c in "0123456789abcdef" for c in document):
        return document
    digest = hashlib.sha256()
    with Path(document).open("rb") as src:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


async def result(args: argparse.Namespace, client: CustodyClient) -> int:
    # Read without an event of its own: the one event below hashes what is printed.
    view = stored_result(client.store, args.sha256, args.tenant)
    data = {
        "record": view.record.model_dump(mode="json"),
        "text": view.text,
        "pages": [
            {"page": p.page, "mean_confidence": p.mean_confidence, "words": len(p.words)}
            for p in view.pages
        ],
    }
    confs = " ".join(f"p{p.page + 1}={p.mean_confidence:.2f}" for p in view.pages)
    out = rendered(args, data, f"{view.text}\n\n-- {view.record.pages} pages; confidence {confs}")
    # The text leaves the store here: the egress event for these exact bytes comes first.
    hand_out(
        client.store,
        args.tenant,
        EgressKind.READ,
        (out + "\n").encode("utf-8"),
        actor=operator(),
        documents=[args.sha256],
    )
    print(out)
    return Exit.OK


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
