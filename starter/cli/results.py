"""``custody result SHA256``: the published text, per-page confidences and the fields read.

Human output shows the text, then one line per field (its value, confidence
and page, or ``review`` or ``missing``); ``--json`` gives the same at the top
level (``text``, ``pages``, ``fields``: ``{NAME: {state, value, confidence,
page, box}}``). Both are document content: the egress event for exactly the
bytes printed is written before they are, with ``--purpose TEXT`` as its purpose
of disclosure (else the tenant policy's, ``custody.state.tenant_policy``).
"""

from __future__ import annotations

import argparse

from custody.egress import EgressKind
from custody.state.egress import hand_out
from starter.cli.actor import operator
from starter.cli.output import Exit, rendered, stdout
from starter.client.connect import CustodyClient
from starter.client.read import ResultView, stored_result

__all__ = ["result"]


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
        "fields": {name: f.model_dump(mode="json") for name, f in view.fields.items()},
    }
    confs = " ".join(f"p{p.page + 1}={p.mean_confidence:.2f}" for p in view.pages)
    text = f"{view.text}\n\n-- {view.record.pages} pages; confidence {confs}{_fields(view)}"
    out = rendered(args, data, text)
    # The text and fields leave the store here: the egress event for these bytes comes first.
    hand_out(
        client.store,
        args.tenant,
        EgressKind.READ,
        (out + "\n").encode("utf-8"),
        actor=operator(),
        documents=[args.sha256],
        purpose=getattr(args, "purpose", None),
    )
    print(out, file=stdout())
    return Exit.OK


def _fields(view: ResultView) -> str:
    """One line per field: its value, confidence and page, or that it is review or missing."""
    if not view.fields:
        return ""
    width = max(len(name) for name in view.fields)
    rows = [f"\n-- fields ({view.record.document_type})"]
    for name, f in view.fields.items():
        shown = (
            f"{f.value}  ({f.confidence:.2f}, p{(f.page or 0) + 1})"
            if f.state == "value"
            else f.state
        )
        rows.append(f"   {name:<{width}}  {shown}")
    return "\n".join(rows)
