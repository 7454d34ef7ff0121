"""A published referral's redacted view, through the real pipeline, store and signing key.

The referral is submitted to the real workers (Temporal dev server, default
OCR engine), published and signed; the view is then made from what the
store holds, its source rendered in the sandboxed child.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from activities.engines.selection import build_checker
from activities.redact.policy import DEFAULT_REDACTION
from activities.redact.service import Redactor
from activities.redact.view import SignedView, view_problems
from activities.scratch import StagingArea
from custody import ids
from custody.errors import ConfigurationError
from custody.ledger.signing import public_keys, signer_from_settings
from custody.redactions import view_key
from custody.stores.local import LocalStore
from starter.bench.referrals import write_set
from starter.client.submit import submit, wait
from tests.helpers import StandInEngine, make_settings, running_pipeline


async def test_redaction_service_signs_a_view_linked_to_the_untouched_record(
    temporal_client: Client,
    temporal_address: str,
    tmp_path: Path,
    tenant: str,
    ocr_engine: OcrEngine,
) -> None:
    """The view verifies, names the record's hash, and leaves the record's bytes as they were."""
    settings = make_settings(tmp_path / "home", temporal_address)
    [path] = write_set(tmp_path / "set", 1, seed=11)
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sub = await submit(custody, path, tenant=tenant)
        await wait(custody, sub.sha256, tenant=tenant)
        store = custody.store
    record_key = ids.record_key(sub.sha256, tenant)
    before = store.get(record_key)
    area = StagingArea(settings.staging_path)
    redactor = Redactor(
        store,
        signer_from_settings(settings),
        area,
        lambda: ocr_engine,
        settings.limits,
        checker=lambda: build_checker(settings),
    )
    signed = redactor.redact(sub.sha256, tenant, DEFAULT_REDACTION, "reviewer@test")
    assert store.get(record_key) == before
    assert signed.view.record_sha256 == hashlib.sha256(before).hexdigest()
    assert view_problems(store, signed, public_keys(store)) == []
    assert signed.view.entries and {e.approved_by for e in signed.view.entries} == {"reviewer@test"}
    assert (
        signed.view.check.leaks == 0 and signed.view.check.engine == f"{ocr_engine.name}+tesseract"
    )
    again = redactor.redact(sub.sha256, tenant, DEFAULT_REDACTION, "someone-else")
    assert again == signed  # made once: a second request gets the stored view
    forged = signed.model_copy(update={"view": signed.view.model_copy(update={"entries": []})})
    assert any("signature" in p for p in view_problems(store, forged, public_keys(store)))
    key = view_key(sub.sha256, tenant, DEFAULT_REDACTION.sha256())
    assert SignedView.model_validate_json(store.get(key)) == signed


def test_redaction_service_without_its_checker_makes_no_view_on_any_attempt(
    tmp_path: Path,
) -> None:
    """A second reader that cannot be built (fault injected: its factory raises as
    ``build_checker`` does without Tesseract) fails every view, not only the first."""
    settings = make_settings(tmp_path, "127.0.0.1:1")  # no server: nothing is sent
    built: list[str] = []

    def engine() -> OcrEngine:
        built.append("engine")
        return StandInEngine()  # type: ignore[return-value]

    def checker() -> OcrEngine | None:
        raise ConfigurationError(detail="no tesseract")

    redactor = Redactor(
        LocalStore(tmp_path / "store"),
        signer_from_settings(settings),
        StagingArea(settings.staging_path),
        engine,
        settings.limits,
        checker=checker,
    )
    for _ in range(2):
        with pytest.raises(ConfigurationError):
            redactor._ocr()
    assert built == []
