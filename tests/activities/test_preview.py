"""The preview activity on its own (``ActivityEnvironment``): pages to scratch, refusals coded.

Real parts: the local store, the staging area, the sandboxed child that
inspects and renders; the engine is the quick stand-in (its output is not what
these tests look at) and the clock is the activity's scheduled time, set here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.engines.lanes import EngineLanes
from activities.preview import PreviewActivities
from activities.scratch import StagingArea
from custody.previews import PreviewInput, preview_prefix
from custody.settings import Limits
from custody.stores.local import LocalStore
from tests.starter.edge.conftest import QuickEngine, png


def _setup(tmp_path: Path, tenant: str, body: bytes) -> tuple[PreviewActivities, PreviewInput]:
    store = LocalStore(tmp_path / "objects")
    sha = hashlib.sha256(body).hexdigest()
    inp = PreviewInput(
        preview_id="0" * 32,
        sha256=sha,
        tenant=tenant,
        media_type="image/png",
        source_key=f"{preview_prefix(sha, tenant, '0' * 32)}source",
        deadline_s=30.0,
    )
    store.put(inp.source_key, body)
    area = StagingArea(tmp_path / "staging")
    return PreviewActivities(store, area, QuickEngine(), EngineLanes(1), Limits()), inp


def _env(queued_s: float = 0.0) -> ActivityEnvironment:
    env = ActivityEnvironment()
    scheduled = datetime.now(UTC) - timedelta(seconds=queued_s)
    env.info = dataclasses.replace(
        env.info, activity_type="custody.preview", current_attempt_scheduled_time=scheduled
    )
    return env


def test_preview_activity_writes_the_pages_to_scratch_and_answers_keys_and_counts(
    tmp_path: Path, tenant: str
) -> None:
    """The pages land under the preview's scratch key; the result holds that key and counts."""
    activities, inp = _setup(tmp_path, tenant, png(1, side=64))
    result = _env().run(activities.preview, inp)
    [page] = json.loads(activities._store.get(inp.pages_key))
    assert (result.pages_key, result.pages, result.engine) == (inp.pages_key, 1, "quick")
    assert (page["page"], page["width"], page["height"], page["text"]) == (0, 64, 64, "ok")
    assert StagingArea(tmp_path / "staging").files() == []  # the staged copy is gone


def test_preview_activity_past_its_deadline_stops_and_writes_nothing(
    tmp_path: Path, tenant: str
) -> None:
    """Queued past its deadline, the work stops before its first page: PREVIEW_TIMEOUT, no pages."""
    activities, inp = _setup(tmp_path, tenant, png(2))
    with pytest.raises(ApplicationError) as failed:
        _env(queued_s=31.0).run(activities.preview, inp)
    assert failed.value.type == "PREVIEW_TIMEOUT"
    assert not activities._store.exists(inp.pages_key)


def test_preview_activity_refuses_a_page_past_the_preview_limits(
    tmp_path: Path, tenant: str
) -> None:
    """A page wider than 10,000 px is PIXEL_LIMIT, non-retryable, from the sandboxed render."""
    activities, inp = _setup(tmp_path, tenant, _wide_png())
    with pytest.raises(ApplicationError) as failed:
        _env().run(activities.preview, inp)
    assert (failed.value.type, failed.value.non_retryable) == ("PIXEL_LIMIT", True)
    assert not activities._store.exists(inp.pages_key)


def test_preview_activity_refuses_a_reference_into_another_tenants_folder(
    tmp_path: Path, tenant: str
) -> None:
    """A source key outside the asking tenant's scope is REF_INVALID: nothing is opened."""
    activities, inp = _setup(tmp_path, tenant, png(3))
    other = inp.model_copy(update={"tenant": f"{tenant}-x"})
    with pytest.raises(ApplicationError) as failed:
        _env().run(activities.preview, other)
    assert failed.value.type == "REF_INVALID"


def _wide_png() -> bytes:
    out = io.BytesIO()
    Image.new("L", (10_001, 8), 255).save(out, format="PNG")
    return out.getvalue()
