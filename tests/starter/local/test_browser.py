"""The codec server's sign-in, in a real browser: Debian's Chromium, headless, driven by Playwright.

The Temporal UI (served by the dev server with ``--ui-codec-endpoint``) fetches
``/codec/decode`` from the browser with credentials; only a browser that signed
in at the codec server's ``/login`` carries the session cookie, so only it sees
the document's decoded workflow input. No browser is downloaded: Playwright
drives ``/usr/bin/chromium`` (``make test-deps`` installs it).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import uuid4

import pytest
import uvicorn

from custody.keys.keyring import ensure_dev_keyring
from custody.settings import Settings
from starter.client.connect import CustodyClient
from starter.client.submit import submit
from starter.local.codec_server import codec_endpoint, codec_port, create_app, ui_origins
from starter.local.stack import Stack
from tests.helpers import make_settings

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = "browser-sign-in-token-0123456789-abcdef"
#: The UI keeps its codec settings in localStorage (temporalio/ui data-encoder-config):
#: "use my browser setting" with "include cross-origin credentials".
BROWSER_CODEC_SETTINGS = """([endpoint]) => {
  localStorage.setItem('endpoint', JSON.stringify(endpoint));
  localStorage.setItem('includeCredentials', 'true');
  localStorage.setItem('overrideRemoteCodecConfiguration', 'true');
}"""


def _needs_browser() -> None:
    """Skip off CI when Chromium or Playwright is missing; on CI their absence fails."""
    missing = not CHROMIUM.exists() or importlib.util.find_spec("playwright") is None
    if missing and not os.environ.get("CI"):
        pytest.skip("needs Debian's chromium and playwright: make test-deps")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def ui_settings(tmp_path: Path) -> AsyncIterator[Settings]:
    """A dev server whose UI is pointed at a live codec server, as ``custody up`` runs them."""
    _needs_browser()
    temporal_port, ui_port, codec_port = _free_port(), _free_port(), _free_port()
    settings = make_settings(
        tmp_path / "home",
        f"127.0.0.1:{temporal_port}",
        temporal_ui_port=ui_port,
        codec_port=codec_port,
    )
    # The dev server exactly as ``custody up`` starts it (UI pointed at the codec server).
    temporal = next(svc for svc in Stack(settings).services() if svc.name == "temporal")
    server = subprocess.Popen(temporal.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = create_app(ensure_dev_keyring(settings), TOKEN, ui_origins(settings))
    web = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=codec_port, log_level="warning")
    )
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    try:
        yield settings
    finally:
        web.should_exit = True
        server.terminate()
        server.wait(timeout=30)
        thread.join(timeout=10)


async def _submit_without_workers(settings: Settings, marker: str) -> str:
    """A real submission; no worker runs, so the workflow waits with its sealed input."""
    for _ in range(120):  # the dev server takes a few seconds to listen
        try:
            client = await CustodyClient.connect(settings)
            break
        except RuntimeError:
            await asyncio.sleep(0.5)
    else:
        raise AssertionError("the dev server never listened")
    done = await submit(client, b"%PDF-1.4 browser test " + marker.encode(), source_id=marker)
    return done.workflow_id


async def _decoded_input_visible(page: object, url: str, marker: str) -> bool:
    """Open the workflow's page and wait for its input to render (decoded or not)."""
    from playwright.async_api import Page

    assert isinstance(page, Page)
    await page.goto(url)
    await page.get_by_text("Input").first.wait_for(state="attached", timeout=60_000)
    await page.wait_for_timeout(3000)  # the codec fetch runs after the first paint
    html = await page.content()
    assert url.rpartition("/")[2] in html  # the document's own page, rendered
    return marker in html


async def test_codec_sign_in_in_a_real_browser_shows_decoded_payloads(
    ui_settings: Settings,
) -> None:
    """Without signing in the UI shows no decoded input; after ``/login`` it does."""
    from playwright.async_api import async_playwright

    marker = f"browser-src-{uuid4().hex[:12]}"
    workflow_id = await _submit_without_workers(ui_settings, marker)
    ui = f"http://localhost:{ui_settings.temporal_ui_port}"
    url = f"{ui}/namespaces/default/workflows/{workflow_id}"
    codec = f"http://localhost:{codec_port(ui_settings)}"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = await browser.new_page()
        await page.goto(ui)
        await page.evaluate(BROWSER_CODEC_SETTINGS, [codec_endpoint(ui_settings)])
        assert not await _decoded_input_visible(page, url, marker)
        await page.goto(f"{codec}/login")
        await page.fill("input[name=token]", TOKEN)
        await page.click("button")
        assert "Signed in" in await page.content()
        assert await _decoded_input_visible(page, url, marker)
        await browser.close()
