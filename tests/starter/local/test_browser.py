"""The codec server's sign-in, in a real browser, by the steps docs/phi.md gives.

The Temporal UI (served by the dev server with ``--ui-codec-endpoint``) fetches
``/codec/decode`` from the browser with credentials; only a browser that signed
in at the codec server's ``/login`` carries the session cookie, so only it sees
the document's decoded workflow input. The test reads the numbered steps of
docs/phi.md's "Seeing decoded payloads in the Web UI" and performs each action
they name, by the label the docs print in bold (:data:`ACTIONS` is the whole
grammar): a step it cannot follow, or a label the page does not have, fails.
No browser is downloaded: Playwright drives ``/usr/bin/chromium`` (``make
test-deps`` installs it).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import socket
import subprocess
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import uvicorn

from custody.keys.keyring import ensure_dev_keyring
from custody.settings import Settings
from starter.client.connect import CustodyClient
from starter.client.submit import submit
from starter.local.codec_server import codec_port, codec_token, create_app, ui_origins
from starter.local.stack import Stack
from tests.helpers import make_settings

CHROMIUM = Path("/usr/bin/chromium")
PHI = Path(__file__).resolve().parents[3] / "docs" / "phi.md"
SECTION = "## Seeing decoded payloads in the Web UI"
#: The documented defaults, and the home the docs' ``cat`` reads from (its cwd here).
DOC_UI, DOC_CODEC = "localhost:8233", "localhost:8234"
#: Each action a step may name, as the docs phrase it; matched left to right.
ACTIONS = {
    "read": r"Read the token: `(?P<command>cat [^`]+)`",
    "open": r"Open `(?P<url>[^`]+)`",
    "fill_token": r"paste the token into \*\*(?P<label>[^*]+)\*\*",
    "fill": r"paste `(?P<value>[^`]+)` into \*\*(?P<label>[^*]+)\*\*",
    "click": r"click [^*]*?\*\*(?P<label>[^*]+)\*\*",
    "dialog": r"In the \*\*(?P<label>[^*]+)\*\* dialog",
    "choose": r"choose \*\*(?P<label>[^*]+)\*\*",
    "turn_on": r"turn on \*\*(?P<label>[^*]+)\*\*",
    "workflow": r"Open any Custody workflow",
}
_GRAMMAR = {name: re.compile(rx) for name, rx in ACTIONS.items()}


@dataclass(frozen=True)
class Action:
    kind: str
    args: dict[str, str]


def documented_steps() -> list[list[Action]]:
    """The numbered steps of the docs' sign-in, each as the actions it names, in order."""
    text = PHI.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    items = re.findall(r"^\d+\. (.*?)(?=^\d+\. |^\S|\Z)", section, re.M | re.S)
    return [_actions(" ".join(item.split())) for item in items]


def _actions(step: str) -> list[Action]:
    """The actions one step names, leftmost first."""
    found: list[Action] = []
    at = 0
    while True:
        hits = [(m.start(), n, m) for n, rx in _GRAMMAR.items() if (m := rx.search(step, at))]
        if not hits:
            break
        _, kind, match = min(hits, key=lambda hit: hit[0])
        found.append(Action(kind, match.groupdict()))
        at = match.end()
    assert found, f"a documented step names no action the test can follow: {step!r}"
    return found


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
    temporal_port, ui_port, codec = _free_port(), _free_port(), _free_port()
    settings = make_settings(
        tmp_path / ".custody",  # where the docs' `cat .custody/keys/codec-token` looks
        f"127.0.0.1:{temporal_port}",
        temporal_ui_port=ui_port,
        codec_port=codec,
    )
    # The dev server exactly as ``custody up`` starts it (UI pointed at the codec server).
    temporal = next(svc for svc in Stack(settings).services() if svc.name == "temporal")
    server = subprocess.Popen(temporal.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ring = ensure_dev_keyring(settings)  # as `custody up` makes it, its codec token too
    app = create_app(ring, codec_token(settings, ring), ui_origins(settings))
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=codec, log_level="warning"))
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


async def _decoded_input_visible(page: Any, url: str, marker: str) -> bool:
    """Open the workflow's page and wait for its input to render (decoded or not)."""
    await page.goto(url)
    await page.get_by_text("Input").first.wait_for(state="attached", timeout=60_000)
    await page.wait_for_timeout(3000)  # the codec fetch runs after the first paint
    html = await page.content()
    assert url.rpartition("/")[2] in html  # the document's own page, rendered
    return marker in html


class Follower:
    """A person at the browser, doing what each documented action says."""

    def __init__(self, page: Any, settings: Settings, workflow_url: str, marker: str) -> None:
        self.page, self.settings = page, settings
        self.workflow_url, self.marker = workflow_url, marker
        self.token = ""
        self.decoded: bool | None = None

    def local(self, text: str) -> str:
        """The docs' default ports as this test's servers listen on them."""
        ui, codec = self.settings.temporal_ui_port, codec_port(self.settings)
        return text.replace(DOC_UI, f"localhost:{ui}").replace(DOC_CODEC, f"localhost:{codec}")

    async def do(self, action: Action) -> None:
        await getattr(self, action.kind)(**action.args)

    async def read(self, command: str) -> None:
        cwd = self.settings.home.parent  # the folder that holds .custody
        done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        self.token = done.stdout.strip()

    async def open(self, url: str) -> None:
        await self.page.goto(self.local(url))

    async def fill_token(self, label: str) -> None:
        await self.page.get_by_label(label).fill(self.token)

    async def fill(self, value: str, label: str) -> None:
        await self.page.get_by_label(label).fill(self.local(value))

    async def click(self, label: str) -> None:
        await self.page.get_by_role("button", name=label, exact=True).click()

    async def dialog(self, label: str) -> None:
        await self.page.get_by_role("dialog", name=label).wait_for(timeout=10_000)

    async def choose(self, label: str) -> None:
        await self.page.get_by_label(label).check()  # the UI's label ends with a full stop

    async def turn_on(self, label: str) -> None:
        await self.page.get_by_text(label, exact=True).click()  # the toggle's own label
        assert await self.page.get_by_label(label, exact=True).is_checked()

    async def workflow(self) -> None:
        self.decoded = await _decoded_input_visible(self.page, self.workflow_url, self.marker)


async def test_codec_sign_in_by_the_documented_steps_shows_decoded_payloads(
    ui_settings: Settings,
) -> None:
    """Every step of docs/phi.md, followed in a real browser, ends with the workflow's
    input decoded; the same steps without the sign-in (step 2) show none of it."""
    from playwright.async_api import async_playwright

    steps = documented_steps()
    assert [a.kind for a in steps[1]] == ["open", "fill_token", "click"]  # the sign-in
    assert steps[-1][-1].kind == "workflow"
    marker = f"browser-src-{uuid4().hex[:12]}"
    workflow_id = await _submit_without_workers(ui_settings, marker)
    url = f"http://localhost:{ui_settings.temporal_ui_port}/namespaces/default/workflows/"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        seen = {}
        for signed_in in (False, True):
            page = await (await browser.new_context()).new_page()
            person = Follower(page, ui_settings, url + workflow_id, marker)
            for n, step in enumerate(steps, 1):
                if n == 2 and not signed_in:
                    continue
                for action in step:
                    await person.do(action)
            seen[signed_in] = person.decoded
        await browser.close()
    assert seen == {False: False, True: True}
