"""Fields, rules and consent end to end: real dev server, real engine, a sealed store.

A referral drawn without a consent box (``tests.activities.rules.drawn``) is
published under a review policy (band ``review``, ``consent`` named), found
by its participant ID through the keyed index, and refused by a release policy
that requires consent; under a quarantine policy it is ``FIELDS_MISSING``, and
neither its values nor its text reach logs or workflow history. A German
letter under a policy expecting English is ``LANGUAGE_MISMATCH``. A discharge
summary, the type Custody ships configured, is read by the generic reader
whether it is named at submission or classified; a type nobody configured is
refused before anything is stored.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody import ids
from custody.errors import Code, UsageError
from custody.fields import DocType, Extraction
from custody.keys.keyring import init_keyring, keys_dir
from custody.models import DocState, SignedRecord
from custody.operators import DecisionKind, load_credential
from custody.operators.credentials import check_acting
from custody.settings import Settings
from custody.state.egress import add_policy, add_recipient
from custody.state.rules import Action, FieldsPolicy, TypeRules, set_policy
from custody.stores import ObjectStore, open_store
from starter.client import review
from starter.client.connect import CustodyClient
from starter.client.release import release, wait_release
from starter.client.submit import submit, wait
from tests.activities.rules.drawn import (
    DISCHARGE,
    GERMAN,
    PARTICIPANT_ID,
    REFERRAL,
    REFERRAL_DATE,
    png,
)
from tests.helpers import custody_cli, make_settings, recipient, running_pipeline
from tests.identities import as_person
from tests.payloads import Written, every_run_text
from tests.workflows.test_replay import replay_and_keep

VALUES = (REFERRAL_DATE, "2026-03-14", PARTICIPANT_ID, "884213", "Okafor", "knee pain")


def _rules(on_missing: Action) -> FieldsPolicy:
    referral = TypeRules(
        required=("referral_date", "participant_id", "consent"),
        dates=("referral_date",),
        patterns={"participant_id": r"P-\d{5}"},
        on_missing=on_missing,
    )
    return FieldsPolicy(rules={DocType.REFERRAL: referral})


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory, temporal_address: str) -> Settings:
    """A home with a development keyring: objects sealed, references signed, an index."""
    settings = make_settings(tmp_path_factory.mktemp("fields"), temporal_address)
    init_keyring(keys_dir(settings), development=True)
    return settings


def _record(store: ObjectStore, sha256: str, tenant: str) -> SignedRecord:
    return SignedRecord.model_validate_json(store.get(ids.record_key(sha256, tenant)))


async def test_fields_review_policy_publishes_names_finds_and_refuses_without_consent(
    temporal_client: Client, sealed: Settings, ocr_engine: OcrEngine, tenant: str, tmp_path: Path
) -> None:
    """Missing consent waits in review (named); approved as read, it publishes in the review
    band; the ID finds it; a consent-requiring release refuses it."""
    store = open_store(sealed)
    set_policy(store, tenant, _rules("review"))
    async with running_pipeline(temporal_client, sealed, ocr_engine, store=store) as custody:
        sub = await submit(custody, png(REFERRAL), tenant=tenant)
        waiting = await wait(custody, sub.sha256, tenant=tenant)
        assert waiting.state is DocState.REVIEW, waiting
        await _approve_as_read(custody, sealed, sub.sha256, tenant)
        result = await wait(custody, sub.sha256, tenant=tenant)
        assert result.state is DocState.PUBLISHED, result
        record = _record(store, sub.sha256, tenant).record
        assert record.confidence_band == "review" and record.fields_review == ["consent"]
        assert record.document_type == "referral" and record.fields_key is not None
        body = store.get(record.fields_key)
        assert hashlib.sha256(body).hexdigest() == record.fields_sha256
        assert Extraction.model_validate_json(body).value("participant_id") == PARTICIPANT_ID
        rc, found = await custody_cli(
            sealed, "evidence", "find", "--field", "participant_id=p-00421 ", tenant=tenant
        )
        assert rc == 0 and [d["sha256"] for d in found] == [sub.sha256]
        add_policy(store, tenant, eg.Policy(name="consented", require_consent=True))
        add_recipient(store, recipient(tenant, "clinic-b", tmp_path / "outbox"))
        started = await release(
            custody, [sub.sha256], to="clinic-b", policy="consented", tenant=tenant, actor="op"
        )
        refused = await asyncio.wait_for(wait_release(custody, started.release_id), 120)
    assert refused.state is eg.ReleaseState.REFUSED and refused.code == "CONSENT_REQUIRED"
    assert not (tmp_path / "outbox").exists()
    await replay_and_keep(temporal_client, result.workflow_id, "document-fields-review")


async def _approve_as_read(
    custody: CustodyClient, settings: Settings, sha256: str, tenant: str
) -> None:
    """A reviewer's approval as read, through the SDK (the CLI's own path)."""
    person = as_person(settings, f"rev-{tenant}", store=custody.store)
    assert person.operator_credential is not None
    me = check_acting(
        custody.store, load_credential(person.operator_credential), DecisionKind.REVIEW
    )
    signed, corrections = review.decision(me, sha256, tenant)
    answer = await review.resolve(custody, signed, corrections)
    assert answer.state is DocState.PUBLISHED and answer.reviewed_by == f"rev-{tenant}"


async def test_fields_missing_waits_in_review_with_names_and_no_values_in_logs_or_history(
    temporal_client: Client, sealed: Settings, ocr_engine: OcrEngine, tenant: str, written: Written
) -> None:
    """Under a quarantine policy the document waits in review (FIELDS_MISSING) naming
    consent: nothing published, no value in the logs or the history."""
    store = open_store(sealed)
    set_policy(store, tenant, _rules("quarantine"))
    async with running_pipeline(temporal_client, sealed, ocr_engine, store=store) as custody:
        sub = await submit(custody, png(REFERRAL), tenant=tenant, document_type="referral")
        result = await wait(custody, sub.sha256, tenant=tenant)
        waiting = await review.status(custody, sub.sha256, tenant)
    assert result.state is DocState.REVIEW and waiting.reasons == ["FIELDS_MISSING"]
    assert waiting.fields_needing_review == ["consent"]
    handle = temporal_client.get_workflow_handle(ids.workflow_id(sub.sha256, tenant))
    await handle.terminate("test over")  # nobody will decide
    history = await every_run_text(temporal_client, handle.id)
    assert '"fields_review":["consent"]' in history  # the names travel, nothing else
    written.assert_none_of(VALUES, history)
    assert not list(store.list(f"results/{ids.scope(tenant)}/"))  # no fields kept


async def test_fields_language_mismatch_quarantines_a_german_page(
    temporal_client: Client, sealed: Settings, ocr_engine: OcrEngine, tenant: str
) -> None:
    """A letter in German under a policy expecting English waits in review, LANGUAGE_MISMATCH."""
    store = open_store(sealed)
    set_policy(store, tenant, FieldsPolicy(languages=("en",)))
    async with running_pipeline(temporal_client, sealed, ocr_engine, store=store) as custody:
        sub = await submit(custody, png(GERMAN), tenant=tenant)
        result = await wait(custody, sub.sha256, tenant=tenant)
        waiting = await review.status(custody, sub.sha256, tenant)
        await custody.handle(sub.sha256, tenant).terminate("test over")
    assert result.state is DocState.REVIEW and "LANGUAGE_MISMATCH" in waiting.reasons


async def test_fields_discharge_is_read_by_its_configuration_named_or_classified(
    temporal_client: Client, sealed: Settings, ocr_engine: OcrEngine, tenant: str
) -> None:
    """Named at submission or not, a discharge summary's five fields come back in normal form;
    an unconfigured type is UNKNOWN_TYPE before a byte is stored."""
    store = open_store(sealed)
    want = {
        "patient": "Amara Lindqvist",
        "admitted": "2026-03-03",
        "discharged": "2026-03-14",
        "allergies": "penicillin - none known; latex - rash",
        "clinician": "Dr. Tomas Berg",
    }
    async with running_pipeline(temporal_client, sealed, ocr_engine, store=store) as custody:
        with pytest.raises(UsageError) as refused:
            await submit(custody, png(DISCHARGE), tenant=tenant, document_type="invoice")
        assert refused.value.code is Code.UNKNOWN_TYPE
        assert not list(store.list(f"intake/{ids.scope(tenant)}/"))
        named = await submit(custody, png(DISCHARGE), tenant=tenant, document_type="discharge")
        result = await wait(custody, named.sha256, tenant=tenant)
        assert result.state is DocState.PUBLISHED, result
        classified = await submit(custody, png(DISCHARGE[1:]), tenant=tenant)
        other = await wait(custody, classified.sha256, tenant=tenant)
    for sub, how in ((named, "declared"), (classified, "classified")):
        record = _record(store, sub.sha256, tenant).record
        assert record.document_type == "discharge" and record.fields_key is not None
        read = Extraction.model_validate_json(store.get(record.fields_key))
        assert read.classification.how == how
        assert {n: read.value(n) for n in want} == want
    assert other.state is DocState.PUBLISHED
    await replay_and_keep(temporal_client, result.workflow_id, "document-fields-discharge")
