"""What a workflow history says, readable: every payload in it decoded, for the tests
that assert no document value reaches history (they hold no keyring, so payloads are
plain JSON; ``to_json_dict`` alone shows them base64, where no value could be found);
and what a test's processes wrote beside it (``Written``, the ``written`` fixture)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHistory


def history_text(history: WorkflowHistory) -> str:
    """The history's JSON and every payload in it, decoded."""
    data = history.to_json_dict()
    return json.dumps(data) + " " + _payloads(data)


def _payloads(node: object) -> str:
    if isinstance(node, dict):
        own = (
            [base64.b64decode(node["data"]).decode("utf-8", "replace")] if _is_payload(node) else []
        )
        return " ".join(own + [_payloads(v) for v in node.values()])
    if isinstance(node, list):
        return " ".join(_payloads(v) for v in node)
    return ""


def _is_payload(node: dict[str, Any]) -> bool:
    return isinstance(node.get("data"), str) and "metadata" in node


async def every_run_text(client: Client, workflow_id: str) -> str:
    """:func:`history_text` of every run under ``workflow_id`` (a document continues as new:
    into review, into its outcome's run), newest first."""
    texts = []
    async for run in client.list_workflows(f"WorkflowId = '{workflow_id}'"):
        handle = client.get_workflow_handle(workflow_id, run_id=run.run_id)
        texts.append(history_text(await handle.fetch_history()))
    return " ".join(texts)


@dataclass(frozen=True)
class Written:
    """What a test wrote: stdout and stderr, and every log record from DEBUG up."""

    capfd: pytest.CaptureFixture[str]
    caplog: pytest.LogCaptureFixture

    def assert_none_of(self, values: Iterable[str], *also: str) -> None:
        """No value in the output or the logs so far, nor in ``also`` (a history's text,
        a stored object)."""
        out, err = self.capfd.readouterr()
        for seen in (*also, out, err, self.caplog.text):
            for value in values:
                assert value not in seen, value
