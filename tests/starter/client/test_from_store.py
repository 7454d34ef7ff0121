"""``from_store``: after Temporal's retention a document's stored record still answers.

The published record answers with its pages, confidence, text and run; without one,
the latest rejection or quarantine answers with its code; with neither, NotFound.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from custody import ids
from custody.errors import NotFound
from custody.models import (
    DocState,
    OutcomeRecord,
    RecordSignature,
    SignedRecord,
    Transition,
)
from custody.stores.local import LocalStore
from starter.client.read import from_store
from tests.records import result_record

SHA, TENANT = "a" * 64, "t"
AT = datetime(2026, 1, 1, tzinfo=UTC)


def _outcome(run_id: str, state: DocState, code: str, day: int) -> OutcomeRecord:
    return OutcomeRecord(
        sha256=SHA,
        tenant=TENANT,
        source_id=None,
        state=state,
        code=code,
        attempts={"validate": day},
        transitions=[Transition(state=state, at=AT.replace(day=day), by="w@h")],
        workflow_id=ids.workflow_id(SHA, TENANT),
        run_id=run_id,
        concluded_at=AT.replace(day=day),
    )


def test_from_store_answers_the_latest_outcome_then_the_published_record(
    tmp_path: Path,
) -> None:
    """The newest outcome answers with its state, code and key; once published, the
    record answers with its pages and text, and no code."""
    store = LocalStore(tmp_path / "store")
    with pytest.raises(NotFound):
        from_store(store, SHA, TENANT)
    older = _outcome("run-1", DocState.REJECTED, "UNSUPPORTED_MEDIA_TYPE", 2)
    newer = _outcome("run-2", DocState.QUARANTINED, "OCR_FAILED", 3)
    for outcome in (newer, older):
        store.put(ids.outcome_key(SHA, TENANT, outcome.run_id), outcome.model_dump_json().encode())
    concluded = from_store(store, SHA, TENANT)
    assert (concluded.state, concluded.code, concluded.run_id) == (
        DocState.QUARANTINED, "OCR_FAILED", "run-2",
    )  # fmt: skip
    assert concluded.record_key == ids.outcome_key(SHA, TENANT, "run-2")
    assert (concluded.attempts, concluded.transitions) == (newer.attempts, newer.transitions)
    assert (concluded.pages, concluded.text_key, concluded.mean_confidence) == (0, None, None)
    published_at = Transition(state=DocState.PUBLISHED, at=AT, by="w@h")
    record = result_record().model_copy(
        update={"transitions": [published_at], "run_id": "run-published", "attempts": {"ocr": 2}}
    )
    signed = SignedRecord(record=record, signature=RecordSignature(alg="ed25519", kid="k", sig="s"))
    store.put(ids.record_key(SHA, TENANT), signed.model_dump_json().encode())
    published = from_store(store, SHA, TENANT)
    assert (published.sha256, published.tenant, published.state, published.code) == (
        SHA, TENANT, DocState.PUBLISHED, None,
    )  # fmt: skip
    assert published.record_key == ids.record_key(SHA, TENANT)
    assert (published.pages, published.mean_confidence, published.text_key) == (
        1, 0.9, "results/t/x/text.txt",
    )  # fmt: skip
    assert (published.workflow_id, published.run_id) == ("doc-t-x", "run-published")
    assert (published.attempts, published.transitions) == (record.attempts, record.transitions)
