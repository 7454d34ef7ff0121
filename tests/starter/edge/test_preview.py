"""``POST /v1/preview`` on the real edge app: text now, limits with codes, a bounded lane, no trace.

The page is read where OCR runs: the real workers run in this process on the
test's task queues, the I/O worker running the short ``PreviewWorkflow``, the
OCR worker its activity. The happy path runs the session's default engine on a
corpus page, with every byte decoded in the sandboxed child. The lane and
deadline tests give the OCR worker a stand-in engine that waits on an event,
only to hold the lane full for as long as the test needs; the refusals need
no engine output, so their worker has the quick stand-in.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody.keys import keyring as keys
from custody.limits import PolicyLimits
from custody.models import PageText
from custody.previews import PREVIEW_WORKFLOW_NAME, PreviewResult
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.client.connect import CustodyClient
from starter.edge.openapi import document
from tests.helpers import StandInEngine, loaded_by, running_pipeline
from tests.starter.edge.conftest import EdgeHarness, QuickEngine, SettingsFactory, png
from tests.workflows.test_replay import replay_and_keep

EdgeFactory = Callable[..., EdgeHarness]
CORPUS = Path("/work/shared/corpus/ocr_gt")
PAGE = CORPUS / "tess_phototest.tif"


@asynccontextmanager
async def _previewing(
    edge_for: EdgeFactory, temporal: Client, engine: OcrEngine, **overrides: Any
) -> AsyncIterator[EdgeHarness]:
    """The edge, with both workers on its settings' queues and store, the OCR one on ``engine``."""
    async with edge_for(**overrides) as edge:
        settings, store = edge.client.settings, edge.client.store
        async with running_pipeline(temporal, settings, engine, store=store):
            yield edge


def _payload_text(history: dict[str, Any]) -> str:
    """Every payload of a history, decoded: what Temporal keeps of a preview."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "data" in node and "metadata" in node and isinstance(node["data"], str):
                found.append(base64.b64decode(node["data"]).decode("utf-8", "replace"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(history)
    return "\n".join(found)


def _kept(edge: EdgeHarness) -> set[str]:
    """Every file under the store and the staging folder: a preview must add none."""
    roots = (edge.client.settings.objects_dir, edge.client.settings.staging_path)
    return {
        os.path.join(folder, name)
        for root in roots
        for folder, _, names in os.walk(root)
        for name in names
    }


def _image(fmt: str, size: tuple[int, int], frames: int = 1) -> bytes:
    out = io.BytesIO()
    pages = [Image.new("L", size, 255) for _ in range(frames)]
    pages[0].save(out, format=fmt, save_all=frames > 1, append_images=pages[1:])
    return out.getvalue()


def _wide_pdf() -> bytes:
    """One blank page 51 inches wide: past 10,000 px a side at 200 dpi."""
    pdf = pdfium.PdfDocument.new()
    pdf.new_page(51 * 72, 72)
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.mark.skipif(not PAGE.exists(), reason="the shared corpus is not here")
async def test_preview_reads_a_corpus_page_on_the_ocr_worker_and_keeps_nothing(
    edge_for: EdgeFactory,
    temporal_client: Client,
    ocr_engine: OcrEngine,
    tenant: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A real page comes back with word confidences and boxes, non-evidentiary, kept nowhere:
    no scratch object, no staged file, and no word of it in the preview workflow's history."""
    caplog.set_level(logging.DEBUG)
    async with _previewing(edge_for, temporal_client, ocr_engine) as edge:
        auth = edge.tenant(tenant)
        before = _kept(edge)
        headers = {**auth, "Content-Type": "image/tiff"}
        resp = await edge.http.post("/v1/preview", content=PAGE.read_bytes(), headers=headers)
        after = _kept(edge)
        queue = edge.client.settings.io_task_queue
        query = f"WorkflowType = '{PREVIEW_WORKFLOW_NAME}' AND TaskQueue = '{queue}'"
        [run] = [wf async for wf in temporal_client.list_workflows(query)]
        handle = temporal_client.get_workflow_handle(run.id, result_type=PreviewResult)
        result = await handle.result()
        history = _payload_text((await handle.fetch_history()).to_json_dict()).lower()
        await replay_and_keep(temporal_client, run.id, "preview")  # and saved, when recording
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["evidentiary"] is False and resp.headers["custody-evidentiary"] == "false"
    assert resp.headers["cache-control"] == "no-store"
    [page] = body["pages"]
    truth = set((CORPUS / "tess_phototest.txt").read_text().lower().split())
    read = {w["text"].lower() for w in page["words"]}
    assert len(truth & read) >= 0.6 * len(truth), sorted(read)
    assert all(0 <= w["confidence"] <= 1 and len(w["box"]) >= 4 for w in page["words"])
    assert after == before
    assert "quick brown" not in caplog.text.lower()
    assert result.engine == ocr_engine.name and result.pages == 1  # the worker's engine read it
    assert result.pages_key.endswith("/pages.json") and page["text"]
    assert not edge.client.store.exists(result.pages_key)  # read, then deleted by the edge
    assert not any(word in history for word in ("quick", "brown", "lazy")), "text in history"


async def test_preview_on_a_sealed_store_hands_the_worker_a_signed_reference(
    settings_for: SettingsFactory, temporal_client: Client, tenant: str, tmp_path: Path
) -> None:
    """With a keyring the scratch copy is sealed and its reference signed; the worker checks
    the signature, reads the page, and both scratch objects are gone after the answer."""
    settings = settings_for()
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    store = SealedStore(LocalStore(settings.objects_dir), ring)
    client = CustodyClient(temporal=temporal_client, store=store, settings=settings)
    async with (
        EdgeHarness(client) as edge,
        running_pipeline(temporal_client, settings, QuickEngine(), store=store),
    ):
        headers = {**edge.tenant(tenant), "Content-Type": "image/png"}
        resp = await edge.http.post("/v1/preview", content=png(9), headers=headers)
        query = (
            f"WorkflowType = '{PREVIEW_WORKFLOW_NAME}' AND TaskQueue = '{settings.io_task_queue}'"
        )
        [run] = [wf async for wf in temporal_client.list_workflows(query)]
        history = await temporal_client.get_workflow_handle(run.id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    sent = json.loads(started.input.payloads[0].data)
    assert resp.status_code == 200, resp.text
    assert resp.json()["engine"]["name"] == "quick"  # read by the worker's engine
    assert sent["source_sig"] and sent["source_key"].startswith(f"work/{tenant}/")
    assert list(store.list(f"work/{tenant}/")) == []


def test_preview_edge_loads_no_engine_or_decoder() -> None:
    """The edge's app imports no OCR engine, sandbox, decoder or image library: none runs there."""
    roots = ("PIL", "pypdfium2", "numpy", "rapidocr", "pytesseract", "torch")
    inside = ("activities.engines", "activities.inspect", "activities.pages")
    assert loaded_by("import starter.edge.app", roots, inside) == []


def _over_limits() -> list[tuple[str, bytes, dict[str, str], int, str]]:
    return [
        ("3 pages", _image("TIFF", (64, 64), 3), {"Content-Type": "image/tiff"}, 413, "PAGE_LIMIT"),
        ("10,001 px wide", _image("PNG", (10_001, 8)), {}, 413, "PIXEL_LIMIT"),
        ("51 in PDF", _wide_pdf(), {"Content-Type": "application/pdf"}, 413, "PIXEL_LIMIT"),
        ("11 MB declared", png(1), {"Content-Length": str(11 << 20)}, 413, "TOO_LARGE"),
        ("11 MB sent", png(1) + b"\0" * (11 << 20), {}, 413, "TOO_LARGE"),
        ("not a PNG", b"%PDF-1.7\n" + b"\0" * 64, {}, 415, "UNSUPPORTED_TYPE"),
    ]


@pytest.mark.parametrize(
    ("body", "extra", "status", "code"),
    [case[1:] for case in _over_limits()],
    ids=[case[0] for case in _over_limits()],
)
async def test_preview_over_a_limit_is_refused_with_its_code(
    edge_for: EdgeFactory,
    temporal_client: Client,
    tenant: str,
    body: bytes,
    extra: dict[str, str],
    status: int,
    code: str,
) -> None:
    """Too many pages, too many pixels a side, too many bytes or the wrong type: a coded refusal,
    from the edge before any work or from the worker's sandboxed child."""
    async with _previewing(edge_for, temporal_client, QuickEngine()) as edge:
        headers = {**edge.tenant(tenant), "Content-Type": "image/png", **extra}
        before = _kept(edge)
        resp = await edge.http.post("/v1/preview", content=body, headers=headers)
        after = _kept(edge)
    assert (resp.status_code, resp.json()["error"]) == (status, code), resp.text
    assert after == before


async def test_preview_without_a_key_is_401(edge_for: EdgeFactory) -> None:
    """A preview is authenticated like every other endpoint."""
    async with edge_for() as edge:
        resp = await edge.http.post(
            "/v1/preview", content=png(2), headers={"Content-Type": "image/png"}
        )
    assert (resp.status_code, resp.json()["error"]) == (401, "UNAUTHENTICATED")


class GatedEngine(StandInEngine):
    """Stand-in engine that answers only once ``go`` is set: it holds the lane full."""

    name, version = "gated", "1"

    def __init__(self) -> None:
        self.go = threading.Event()
        self.started = threading.Semaphore(0)

    def recognise(self, image: np.ndarray, page: int) -> PageText:
        self.started.release()
        self.go.wait(30)
        h, w = image.shape[:2]
        return PageText(
            page=page, width=w, height=h, text="", words=[], mean_confidence=0.0, seconds=0.0
        )


async def test_preview_lane_full_is_429_with_retry_after(
    edge_for: EdgeFactory, temporal_client: Client, tenant: str
) -> None:
    """With one preview at work and one waiting, a third is 429 PREVIEW_BUSY with Retry-After."""
    engine = GatedEngine()
    lane = {"preview_concurrency": 1, "preview_queue": 1}
    async with _previewing(edge_for, temporal_client, engine, **lane) as edge:
        headers = {**edge.tenant(tenant), "Content-Type": "image/png"}

        def send(seed: int) -> asyncio.Future[httpx.Response]:
            return asyncio.ensure_future(
                edge.http.post("/v1/preview", content=png(seed), headers=headers)
            )

        held = [send(1), send(2)]
        await asyncio.to_thread(engine.started.acquire, True, 30)  # one at work, one queued
        refused = await edge.http.post("/v1/preview", content=png(3), headers=headers)
        engine.go.set()
        done = await asyncio.gather(*held)
    assert refused.status_code == 429 and refused.json()["error"] == "PREVIEW_BUSY"
    assert int(refused.headers["retry-after"]) >= 1
    assert [r.status_code for r in done] == [200, 200]


async def test_preview_that_cannot_finish_in_time_is_429_at_once(
    edge_for: EdgeFactory, temporal_client: Client, tenant: str
) -> None:
    """With room in the queue but a wait past the deadline ahead, the answer is 429 now."""
    engine = GatedEngine()
    lane = {"preview_concurrency": 1, "preview_queue": 3, "preview_deadline_s": 5.0}
    async with _previewing(edge_for, temporal_client, engine, **lane) as edge:
        edge.app.state.preview.lane.mean_s = (
            3.0  # measured: two previews in a row take 6 s, past the 5 s deadline
        )
        headers = {**edge.tenant(tenant), "Content-Type": "image/png"}
        held = asyncio.ensure_future(edge.http.post("/v1/preview", content=png(5), headers=headers))
        await asyncio.to_thread(engine.started.acquire, True, 30)
        refused = await edge.http.post("/v1/preview", content=png(6), headers=headers)
        engine.go.set()
        first = await held
    assert refused.status_code == 429 and refused.json()["error"] == "PREVIEW_BUSY"
    assert int(refused.headers["retry-after"]) >= 3
    assert first.status_code == 200


async def test_preview_past_its_deadline_is_504_and_frees_its_place(
    edge_for: EdgeFactory, temporal_client: Client, tenant: str
) -> None:
    """Past the deadline the answer is 504 PREVIEW_TIMEOUT; the place returns when the work ends,
    and the work's scratch objects and staged copies are gone then too."""
    engine = GatedEngine()
    lane_settings = {"preview_concurrency": 1, "preview_queue": 0, "preview_deadline_s": 1.0}
    async with _previewing(edge_for, temporal_client, engine, **lane_settings) as edge:
        lane = edge.app.state.preview.lane
        lane.mean_s = 0.1  # as if measured: else the first guess (3 s) is refused at once
        headers = {**edge.tenant(tenant), "Content-Type": "image/png"}
        before = _kept(edge)
        resp = await edge.http.post("/v1/preview", content=png(4), headers=headers)
        held_after_answer = lane.open
        engine.go.set()
        for _ in range(400):
            if lane.open == 0:
                break
            await asyncio.sleep(0.05)
        after = _kept(edge)
    assert (resp.status_code, resp.json()["error"]) == (504, "PREVIEW_TIMEOUT")
    assert held_after_answer == 1 and lane.open == 0
    assert after == before


def test_openapi_preview_states_the_deployments_limits() -> None:
    """The document states the preview's byte, page and side limits, tightened by the policy."""
    spec = document(PolicyLimits(max_pages=1, max_bytes=4096))
    text = spec["paths"]["/v1/preview"]["post"]["description"]
    assert "At most 4096 bytes" in text and "1 pages" in text and "10000 px a side" in text
    assert spec["components"]["schemas"]["Preview"]["properties"]["pages"]["maxItems"] == 1
