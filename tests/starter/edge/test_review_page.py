"""The review page in a real browser (issue #31): Debian's Chromium, headless, by Playwright.

A referral waits in review; a clerk signs in with the tenant's review key and
their own credential, opens it from the queue, sees the page image with the
field boxes, types the missing consent and approves; the document is then
published naming them. Every answer the browser got is ``no-store``. No
browser is downloaded (``make test-deps`` installs Chromium).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import uvicorn
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody.models import DocState
from custody.settings import Settings
from custody.stores import open_store
from starter.client.connect import CustodyClient
from starter.client.submit import submit, wait
from starter.edge import tenants
from starter.edge.app import create_app
from starter.edge.scopes import Scope
from tests.activities.rules.drawn import REFERRAL, png
from tests.helpers import make_settings, running_pipeline
from tests.identities import as_person
from tests.starter.local.test_browser import CHROMIUM, _needs_browser
from tests.workflows.test_review import _consent_required


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def _served(client: CustodyClient) -> AsyncIterator[str]:
    """The edge on a loopback port in a thread of this process; its base URL."""
    port = _free_port()
    config = uvicorn.Config(create_app(client), host="127.0.0.1", port=port, log_level="warning")
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    try:
        while not web.started:
            await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        web.should_exit = True
        await asyncio.to_thread(thread.join, 10)


@pytest.fixture
def browser_settings(tmp_path: Path, temporal_address: str) -> Iterator[Settings]:
    _needs_browser()
    yield make_settings(tmp_path, temporal_address)


async def test_review_page_sign_in_correct_a_field_and_approve_publishes_it(
    temporal_client: Client, browser_settings: Settings, ocr_engine: OcrEngine, tenant: str
) -> None:
    """Sign in, open the waiting referral, type consent, Approve: published, reviewed by ana."""
    from playwright.async_api import async_playwright

    store = open_store(browser_settings)
    _consent_required(store, tenant)
    ana = as_person(browser_settings, "ana", store=store)
    assert ana.operator_credential is not None
    _, key = tenants.add(store, tenant, scopes=[Scope.REVIEW])
    async with running_pipeline(temporal_client, browser_settings, ocr_engine, store=store) as c:
        sub = await submit(c, png(REFERRAL), tenant=tenant, document_type="referral")
        assert (await wait(c, sub.sha256, tenant=tenant)).state is DocState.REVIEW
        async with _served(c) as base, async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            page = await (await browser.new_context()).new_page()
            caching: list[str | None] = []
            page.on("response", lambda r: caching.append(r.headers.get("cache-control")))
            await page.goto(f"{base}/review")
            await page.get_by_label("API key").fill(key)
            await page.get_by_label("Reviewer credential").fill(ana.operator_credential.read_text())
            await page.get_by_role("button", name="Sign in").click()
            await page.get_by_role("link", name=sub.sha256[:12]).click()
            image = page.get_by_alt_text("page 1")
            await image.wait_for()
            boxes = await page.locator(".page .box, .page .box.ok").count()
            await page.locator("input[name='field.consent']").fill("true")
            await page.get_by_role("button", name="Approve").click()
            outcome = await page.locator("#outcome").text_content()
            await browser.close()
        result = await wait(c, sub.sha256, tenant=tenant)
    assert boxes >= 1  # the fields read, drawn over the page image
    assert outcome == "published, reviewed by ana", outcome
    assert result.state is DocState.PUBLISHED and result.transitions[-1].by == "ana"
    assert caching and all(h == "no-store" for h in caching), caching
