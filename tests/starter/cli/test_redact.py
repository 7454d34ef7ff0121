"""``custody redact`` asks the I/O workers: the view is made there, never in the CLI's process.

A synthetic referral is published by the real pipeline (dev server, the
session's default engine); the command's handler then runs in this process on
a client of the same store, with only the real I/O worker polling, whose
redact step builds its own default engine for the leak check. Without a
worker the command makes nothing and says so with a code.
"""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stdout
from dataclasses import dataclass
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from activities.engines.base import OcrEngine
from activities.redact.plan import normal
from activities.redact.policy import DEFAULT_REDACTION, RedactionPolicy
from activities.redact.view import SignedView
from custody.ledger.events import Ledger
from custody.redactions import redact_workflow_id, view_key
from custody.settings import Settings
from starter.bench.referrals import write_set
from starter.cli.output import Exit
from starter.cli.redact import approval, ask
from starter.cli.registry import build_parser
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from tests.helpers import loaded_by, make_settings, running_pipeline
from tests.identities import as_person
from tests.payloads import history_text
from tests.workflows.test_replay import replay_and_keep


@dataclass(frozen=True)
class Published:
    settings: Settings
    custody: CustodyClient
    tenant: str
    sha256: str
    truth: dict[str, str]
    #: Acting as the reviewer who approves the views (custody.operators).
    reviewer: Settings


@pytest.fixture(scope="module")
async def published(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    ocr_engine: OcrEngine,
) -> Published:
    home = tmp_path_factory.mktemp("redact-cli")
    settings = make_settings(home, temporal_address)
    [path] = write_set(home / "set", 1, seed=7)
    truth = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())["fields"]
    tenant = "redact-cli"
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sub = await submit(custody, path, tenant=tenant)
        assert (await wait(custody, sub.sha256, tenant=tenant)).state == "published"
    reviewer = as_person(settings, "reviewer", store=custody.store)
    return Published(settings, custody, tenant, sub.sha256, truth, reviewer)


def _args(p: Published, *extra: str) -> argparse.Namespace:
    argv = ["redact", p.sha256, "--json", "--tenant", p.tenant, *extra]
    return build_parser(argv).parse_args(argv)


async def _ask(p: Published, policy: RedactionPolicy, *extra: str) -> tuple[int, dict[str, Any]]:
    """The command's handler, in this process, on the published store: status and JSON."""
    printed = io.StringIO()
    args = _args(p, *extra)
    by = approval(p.reviewer, p.custody.store, args, policy.sha256())  # the command's first step
    with redirect_stdout(printed):
        status = await ask(args, p.custody, policy, by)
    # The in-process worker's log lines land on stdout too: the answer is the JSON document.
    out = printed.getvalue()
    start = 0 if out.startswith("{") else out.index("\n{") + 1
    body, _ = json.JSONDecoder().raw_decode(out[start:])
    return status, body


async def test_redact_cli_without_an_io_worker_makes_nothing_and_says_so(
    published: Published, temporal_client: Client
) -> None:
    """With no I/O worker polling, the command waits its timeout: IO_TIMEOUT, exit 7, no view."""
    p = published
    policy = RedactionPolicy(name="unasked", detectors=("mrn",))  # a view nobody else makes
    status, body = await _ask(p, policy, "--timeout", "2")
    wid = redact_workflow_id(p.sha256, p.tenant, policy.sha256())
    await temporal_client.get_workflow_handle(wid).terminate()  # nobody will take it now
    assert (status, body["error"]) == (Exit.STILL_RUNNING, "IO_TIMEOUT")
    assert not p.custody.store.exists(view_key(p.sha256, p.tenant, policy.sha256()))


async def test_redact_cli_asks_the_io_worker_and_prints_the_signed_view(
    published: Published, temporal_client: Client, ocr_engine: OcrEngine
) -> None:
    """The I/O worker makes, checks and signs the view; the command prints its ids and hashes,
    and the workflow's history carries none of the removed strings."""
    p = published
    async with running_pipeline(
        temporal_client, p.settings, ocr_engine, store=p.custody.store, with_ocr_worker=False
    ):
        status, body = await _ask(p, DEFAULT_REDACTION)
    key = view_key(p.sha256, p.tenant, DEFAULT_REDACTION.sha256())
    signed = SignedView.model_validate_json(p.custody.store.get(key))
    assert status == Exit.OK
    assert (body["state"], body["code"], body["found"]) == ("kept", None, [])
    assert body["view_sha256"] == signed.view.pdf_sha256  # as the redaction_created event has it
    assert sum(body["boxes"].values()) == len(signed.view.entries)
    assert set(body["boxes"]) <= {"field", "detector", "sweep", "recheck"}
    assert (body["view_key"], body["pdf_sha256"]) == (key, signed.view.pdf_sha256)
    assert body["regions"] == len(signed.view.entries) > 0 and body["check"]["leaks"] == 0
    assert body["approved_by"] == "reviewer" and body["event"]["seq"] >= 0
    approvals = Ledger(p.custody.store, p.tenant).for_document(p.sha256)
    assert ("redaction_approved", "reviewer") in [(e.kind, e.actor) for e in approvals]
    wid = redact_workflow_id(p.sha256, p.tenant, DEFAULT_REDACTION.sha256())
    history = await temporal_client.get_workflow_handle(wid).fetch_history()
    await replay_and_keep(temporal_client, wid, "redact")  # and saved, when recording
    kept = normal(history_text(history))
    assert p.sha256 in kept and normal(key) in kept  # the history is readable here ...
    for value in (p.truth["participant_id"], p.truth["clinician"]):
        assert normal(value) not in kept  # ... and holds none of what was removed


async def test_redact_cli_answers_a_refused_view_with_its_code_and_finds(
    published: Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's refusal (a stand-in for its failure, injected on purpose): state refused,
    IDENTIFIER_FOUND, ``found`` by kind, page and box, exit status 3, no view stored."""
    import starter.cli.redact as cli

    found = [{"kind": "mrn", "page": 0, "box": [220, 100, 346, 130]}]
    refusal = ApplicationError(
        f"found: {json.dumps(found)}", {"attempt": 1, "code": "IDENTIFIER_FOUND"},
        type="IDENTIFIER_FOUND", non_retryable=True,
    )  # fmt: skip

    async def refuses(*_: object) -> None:
        raise WorkflowFailureError(cause=refusal)

    monkeypatch.setattr(cli, "_view", refuses)
    policy = RedactionPolicy(name="refused", detectors=("mrn",))
    status, body = await _ask(published, policy)
    assert status == Exit.REJECTED == 3
    assert (body["state"], body["code"], body["found"]) == ("refused", "IDENTIFIER_FOUND", found)
    assert body["view_sha256"] is None and body["boxes"] == {}
    assert not published.custody.store.exists(
        view_key(published.sha256, published.tenant, policy.sha256())
    )


def test_redact_cli_reads_a_removed_string_leak_by_page() -> None:
    """REDACTION_LEAK's places become finds without a box: ``ocr:p2`` is page 1, bytes none."""
    from custody.errors import Code
    from starter.cli.redact import found_in

    assert found_in(Code.REDACTION_LEAK, "found in ocr:p2, bytes") == [
        {"kind": "removed_string", "page": 1, "box": None},
        {"kind": "removed_string", "page": None, "box": None},
    ]


def test_redact_cli_loads_no_engine_renderer_or_redaction_service() -> None:
    """Importing the command loads no OCR engine, sandbox, decoder or the redaction service."""
    roots = ("PIL", "pypdfium2", "numpy", "rapidocr", "pytesseract")
    inside = ("activities.engines", "activities.inspect", "activities.redact.service")
    assert loaded_by("import starter.cli.redact", roots, inside) == []
