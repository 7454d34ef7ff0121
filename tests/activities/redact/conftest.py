"""A published referral with its redacted view, made once per test module.

The referral is published by the real pipeline (dev server, default OCR
engine) and its view made by the real redaction service from what the store
holds, approved by ``reviewer@test``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from activities.engines.selection import build_checker
from activities.pages.raster import GrayPage, to_gray
from activities.redact.policy import DEFAULT_REDACTION
from activities.redact.service import Redactor
from activities.redact.view import SignedView
from activities.scratch import StagingArea
from custody.ledger.signing import signer_from_settings
from custody.models import PageText
from custody.settings import Settings
from custody.stores import ObjectStore
from starter.bench.referrals import generate, write_set
from starter.client.submit import submit, wait
from tests.helpers import make_settings, running_pipeline

APPROVER = "reviewer@test"


@dataclass(frozen=True)
class Viewed:
    settings: Settings
    store: ObjectStore
    tenant: str
    sha256: str
    truth: dict[str, str | bool]
    signed: SignedView
    engine: OcrEngine

    def redactor(self, store: ObjectStore | None = None) -> Redactor:
        """The service over this document's store, or over ``store`` (a copy of it)."""
        return redactor(self.settings, store or self.store, self.engine)


def redactor(settings: Settings, store: ObjectStore, engine: OcrEngine) -> Redactor:
    area = StagingArea(settings.staging_path)
    signer = signer_from_settings(settings)
    checker = lambda: build_checker(settings)  # noqa: E731 - as the workers build it
    return Redactor(store, signer, area, lambda: engine, settings.limits, checker=checker)


@pytest.fixture(scope="module")
async def viewed(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    ocr_engine: OcrEngine,
) -> Viewed:
    tenant = "redact-" + os.urandom(4).hex()
    home: Path = tmp_path_factory.mktemp("redact")
    settings = make_settings(home, temporal_address)
    [path] = write_set(home / "set", 1, seed=11)
    truth = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())["fields"]
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sub = await submit(custody, path, tenant=tenant)
        await wait(custody, sub.sha256, tenant=tenant)
        store = custody.store
    made = redactor(settings, store, ocr_engine)
    signed = made.redact(sub.sha256, tenant, DEFAULT_REDACTION, APPROVER)
    return Viewed(settings, store, tenant, sub.sha256, truth, signed, ocr_engine)


@pytest.fixture(scope="module")
def letter(ocr_engine: OcrEngine) -> tuple[list[GrayPage], list[PageText]]:
    """Referral 2 of set 7 (``starter.bench.referrals``): its page images and the real
    engine's words, once per module."""
    ref = generate(2, 7)
    images = [to_gray(page) for page in ref.pages]
    return images, [ocr_engine.recognise(image, n) for n, image in enumerate(images)]
