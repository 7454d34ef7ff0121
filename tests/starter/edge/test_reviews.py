"""The review API over HTTP (issue #31): real dev server, real engine, the edge in-process.

Scope refusals and the three codes first (no worker needed: nothing is in
review); then a referral that waits in review is listed, shown (an egress
event naming the reviewer) and decided by two reviewers at once: one wins and
the document is published naming them, the other is 409 ALREADY_DECIDED. No
value on the page or typed by a reviewer reaches the history or the logs.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import ids
from custody.models import DocState
from custody.operators import Role
from custody.settings import Settings
from custody.state.egress import egress_events
from custody.stores import open_store
from starter.client.submit import submit, wait
from starter.edge import tenants
from starter.edge.reviews import CREDENTIAL_HEADER
from starter.edge.scopes import Scope
from tests.activities.rules.drawn import REFERRAL, png
from tests.helpers import make_settings, running_pipeline
from tests.identities import as_person
from tests.payloads import Written, every_run_text
from tests.starter.edge.conftest import EdgeHarness
from tests.workflows.test_review import SECRETS, _consent_required

ZERO = "0" * 64


def credential(settings: Settings) -> dict[str, str]:
    """The header a reviewer presents: their key file, base64."""
    assert settings.operator_credential is not None
    raw = settings.operator_credential.read_bytes()
    return {CREDENTIAL_HEADER: base64.b64encode(raw).decode()}


async def test_reviews_refuse_keys_without_the_scope_and_unknown_documents(
    edge_for: Callable[..., EdgeHarness], tenant: str
) -> None:
    """upload/read keys get 403 SCOPE_DENIED; a review key gets 404 NOT_IN_REVIEW,
    401 OPERATOR_REQUIRED without a reviewer, 400 on a malformed decision."""
    async with edge_for() as edge:
        scanner = edge.tenant(tenant)  # upload and read, as ``tenants add`` mints
        ana = credential(as_person(edge.client.settings, "ana", store=edge.client.store))
        calls = [("GET", "/v1/reviews", None), ("GET", f"/v1/reviews/{ZERO}", None),
                 ("POST", f"/v1/reviews/{ZERO}", {"verdict": "approve"})]  # fmt: skip
        for method, url, body in calls:
            resp = await edge.http.request(method, url, headers=scanner | ana, json=body)
            assert (resp.status_code, resp.json()["error"]) == (403, "SCOPE_DENIED"), url
        _, key = tenants.add_key(edge.client.store, tenant, [Scope.REVIEW])
        clerk = {"Authorization": f"Bearer {key}"}
        assert (await edge.http.get("/v1/reviews", headers=clerk)).json() == []
        for method, url, body in calls[1:]:
            resp = await edge.http.request(method, url, headers=clerk | ana, json=body)
            assert (resp.status_code, resp.json()["error"]) == (404, "NOT_IN_REVIEW"), url
        url = f"/v1/reviews/{ZERO}"
        nobody = await edge.http.post(url, headers=clerk, json={"verdict": "approve"})
        assert (nobody.status_code, nobody.json()["error"]) == (401, "OPERATOR_REQUIRED")
        forged = clerk | {CREDENTIAL_HEADER: base64.b64encode(b'{"kind": 1}').decode()}
        bad = await edge.http.post(url, headers=forged, json={"verdict": "approve"})
        assert (bad.status_code, bad.json()["error"]) == (403, "OPERATOR_UNKNOWN")
        zeroth = [{"page": 0, "line": 1, "text": ""}]
        for malformed in ({"verdict": "maybe"}, {"verdict": "approve", "by": "ana"},
                          {"verdict": "approve", "lines": zeroth}):  # fmt: skip
            resp = await edge.http.post(url, headers=clerk | ana, json=malformed)
            assert (resp.status_code, resp.json()["error"]) == (400, "BAD_REQUEST"), malformed


@pytest.fixture
def sealed(tmp_path: Path, temporal_address: str) -> Settings:
    """A home without keys: history payloads stay readable, so the test sees no value there."""
    return make_settings(tmp_path, temporal_address)


async def test_two_reviewers_at_once_one_wins_and_the_document_is_published(
    temporal_client: Client, sealed: Settings, ocr_engine: OcrEngine, tenant: str, written: Written
) -> None:
    """Queue, material (egress ``review`` naming the reviewer), two decisions at once:
    one 200 ``{state, reviewed_by}``, the other 409; an auditor is 403 ROLE_REQUIRED."""
    store = open_store(sealed)
    _consent_required(store, tenant)
    ana, bob = (credential(as_person(sealed, n, store=store)) for n in ("ana", "bob"))
    eve = credential(as_person(sealed, "eve", Role.AUDITOR, store=store))
    _, key = tenants.add(store, tenant, scopes=[Scope.REVIEW])
    clerk = {"Authorization": f"Bearer {key}"}
    async with running_pipeline(temporal_client, sealed, ocr_engine, store=store) as custody:
        sub = await submit(custody, png(REFERRAL), tenant=tenant, document_type="referral")
        assert (await wait(custody, sub.sha256, tenant=tenant)).state is DocState.REVIEW
        async with EdgeHarness(custody) as edge:
            queue = (await edge.http.get("/v1/reviews", headers=clerk)).json()
            url = f"/v1/reviews/{sub.sha256}"
            bad_purpose = await edge.http.get(f"{url}?purpose=%01", headers=clerk | ana)
            shown = await edge.http.get(f"{url}?purpose=quality%20review", headers=clerk | ana)
            denied = await edge.http.post(url, headers=clerk | eve, json=_approve())
            no_code = await edge.http.post(url, headers=clerk | ana, json={"verdict": "reject"})
            both = await asyncio.gather(
                *(edge.http.post(url, headers=clerk | who, json=_approve()) for who in (ana, bob))
            )
        result = await wait(custody, sub.sha256, tenant=tenant)
        history = await every_run_text(temporal_client, ids.workflow_id(sub.sha256, tenant))
    assert [(r["sha256"], r["fields_needing_review"]) for r in queue] == [(sub.sha256, ["consent"])]
    assert set(queue[0]) == {"sha256", "tenant", "reasons", "fields_needing_review",
                             "waiting_since"}  # fmt: skip
    material = shown.json()
    assert shown.headers["cache-control"] == "no-store"
    assert len(material["fields"]["participant_id"]["box"]) == 4
    assert material["pages"][0]["image_png"]
    assert (denied.status_code, denied.json()["error"]) == (403, "ROLE_REQUIRED")
    assert (no_code.status_code, no_code.json()["error"]) == (422, "DECISION_INVALID")
    answers = sorted(((r.status_code, r.json()) for r in both), key=lambda a: a[0])
    (ok, won), (lost, refused) = answers
    assert ok == 200 and won["state"] == "published" and won["reviewed_by"] in ("ana", "bob")
    assert (lost, refused["error"]) == (409, "ALREADY_DECIDED"), answers
    assert result.state is DocState.PUBLISHED
    assert result.transitions[-1].by == won["reviewed_by"]
    assert (bad_purpose.status_code, bad_purpose.json()["error"]) == (400, "BAD_REQUEST")
    handed = [
        (e.kind, e.actor, e.purpose)
        for e in egress_events(store, tenant)
        if sub.sha256 in e.documents
    ]
    assert handed == [("review", "ana", "quality review")], handed  # the bad one: no event
    derived = [k for k in store.list(f"results/{tenant}/{sub.sha256}/") if "/review-" in k]
    assert len(derived) == 1  # one decision took effect, once
    written.assert_none_of(SECRETS, history)


def _approve() -> dict[str, Any]:
    return {"verdict": "approve", "fields": {"consent": "true"}, "note": SECRETS[-1]}
