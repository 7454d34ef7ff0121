"""Review as a Temporal state (issue #31), end to end: real dev server, real engine, sealed store.

A referral drawn without its consent box, under a policy that requires consent,
does not end: it waits as a *Running* ``DocumentReview`` (state ``review``),
``wait()`` returns on it, ``custody review ls`` lists it with its reasons and
the field in question, ``show`` hands out the page images and fields (an
egress event of kind ``review``), and ``resolve --approve --field consent=true``
publishes it naming the reviewer, with a signed derived version beside the
evidence record. A second decision is ALREADY_DECIDED; one by a revoked
identity, or on a document not in review, is refused and changes nothing. No
value read or typed reaches the history, the logs or the search attributes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from activities.engines.base import OcrEngine
from custody import ids
from custody.fields import DocType
from custody.ledger.events import Ledger
from custody.models import DocState
from custody.operators import Role
from custody.reviews import REVIEW_WORKFLOW_NAME
from custody.settings import Settings
from custody.state.egress import egress_events
from custody.state.rules import FieldsPolicy, TypeRules, set_policy
from custody.stores import open_store
from starter.cli.output import Exit
from starter.client.submit import submit, wait
from tests.activities.rules.drawn import PARTICIPANT_ID, REFERRAL, png
from tests.helpers import custody_cli, make_settings, running_pipeline
from tests.identities import as_person
from tests.payloads import Written, every_run_text
from tests.workflows.test_replay import replay_and_keep

#: Values on the page, and the one the reviewer types: none may reach history or logs.
SECRETS = (PARTICIPANT_ID, "Okafor", "knee pain", "consent given by phone")


@pytest.fixture
def sealed(tmp_path: Path, temporal_address: str) -> Settings:
    """A home kept without keys (as the suite's in-process workers are): the payloads in
    history stay readable here, so the test can see that no value is among them."""
    return make_settings(tmp_path, temporal_address)


def _consent_required(store: object, tenant: str) -> None:
    rules = TypeRules(required=("consent",), on_missing="review")
    set_policy(store, tenant, FieldsPolicy(rules={DocType.REFERRAL: rules}))  # type: ignore[arg-type]


async def test_review_waits_running_and_a_reviewer_publishes_it_corrected(
    temporal_client: Client,
    sealed: Settings,
    ocr_engine: OcrEngine,
    tenant: str,
    tmp_path: Path,
    written: Written,
) -> None:
    """review -> resolve --approve --field consent=... -> published, reviewed_by, verified."""
    store = open_store(sealed)
    _consent_required(store, tenant)
    ana = as_person(sealed, "ana", Role.REVIEWER, store=store)
    async with running_pipeline(temporal_client, sealed, ocr_engine, store=store) as custody:
        sub = await submit(custody, png(REFERRAL), tenant=tenant, document_type="referral")
        waiting = await wait(custody, sub.sha256, tenant=tenant)
        assert waiting.state is DocState.REVIEW, waiting
        handle = temporal_client.get_workflow_handle(ids.workflow_id(sub.sha256, tenant))
        desc = await handle.describe()
        assert (desc.workflow_type, desc.status) == (
            REVIEW_WORKFLOW_NAME, WorkflowExecutionStatus.RUNNING,
        )  # fmt: skip
        rc, listed = await custody_cli(ana, "review", "ls", tenant=tenant)
        assert rc == 0 and [r["sha256"] for r in listed] == [sub.sha256], listed
        assert "FIELDS_MISSING" in listed[0]["reasons"]
        assert listed[0]["fields_needing_review"] == ["consent"]
        rc, shown = await custody_cli(ana, "review", "show", sub.sha256, "--out",
                                      str(tmp_path / "pages"), "--purpose", "quality review",
                                      tenant=tenant)  # fmt: skip
        assert rc == 0 and shown["fields"]["participant_id"]["value"] == PARTICIPANT_ID
        assert shown["pages"][0]["image_png"] and (tmp_path / "pages" / "page-0001.png").exists()
        resolve = ("review", "resolve", sub.sha256, "--approve", "--field", "consent=true",
                   "--note", SECRETS[-1])  # fmt: skip
        rc, answer = await custody_cli(ana, *resolve, tenant=tenant)
        assert rc == 0 and answer == {
            "sha256": sub.sha256, "state": "published", "reviewed_by": "ana",
        }, answer  # fmt: skip
        rc, again = await custody_cli(ana, *resolve, tenant=tenant)
        assert rc == Exit.DENIED and again["error"] == "ALREADY_DECIDED", again
        result = await wait(custody, sub.sha256, tenant=tenant)
        rc, verified = await custody_cli(sealed, "verify", sub.sha256, tenant=tenant)
        history = await every_run_text(temporal_client, handle.id)
    assert result.state is DocState.PUBLISHED and result.transitions[-1].by == "ana"
    assert rc == 0 and verified["ok"], verified
    checked = {c["name"]: c["ok"] for c in verified["reports"][0]["checks"]}
    for name in ("signature", "decision", "subject", "record", "corrections", "ledger"):
        assert checked[f"review.{name}"] is True, (name, checked)
    kinds = [(e.kind, e.actor) for e in Ledger(store, tenant).for_document(sub.sha256)]
    assert ("reviewed", "ana") in kinds, kinds
    handed = [e for e in egress_events(store, tenant) if sub.sha256 in e.documents]
    assert [(e.kind, e.actor, e.purpose) for e in handed] == [
        ("review", "ana", "quality review")
    ], handed
    derived = [k for k in store.list(f"results/{tenant}/{sub.sha256}/") if "/review-" in k]
    assert len(derived) == 1  # one decision, one derived version
    attributes = json.dumps({str(k): str(v) for k, v in desc.search_attributes.items()})
    written.assert_none_of(SECRETS, history, attributes, store.get(derived[0]).decode())
    await replay_and_keep(temporal_client, handle.id, "review-published")
