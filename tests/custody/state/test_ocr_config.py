"""The OCR configuration registry and ``custody ocr config``: history, pin, rollback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from custody.state.ocr_config import ConfigRegistry, OcrConfig
from custody.stores.local import LocalStore

TUNED = OcrConfig(
    engine="easyocr", version="1.7.2", params={"canvas_size": 1280}, model_hashes={"m.pth": "ab"}
)
CHANGED = TUNED.model_copy(update={"params": {"canvas_size": 960}})


def test_registry_records_a_change_once_and_rolls_back_to_the_previous(tmp_path: Path) -> None:
    """A restart on the same configuration adds nothing; a change adds one; rollback pins."""
    registry = ConfigRegistry(LocalStore(tmp_path))
    assert registry.active() is None and registry.previous() is None
    first = registry.observe(TUNED, "worker-1")
    assert first is not None and first.seq == 1
    assert registry.observe(TUNED, "worker-2") is None
    second = registry.observe(CHANGED, "worker-3")
    assert second is not None and second.digest == CHANGED.digest != TUNED.digest
    active, previous = registry.active(), registry.previous()
    assert active is not None and active.digest == CHANGED.digest
    assert previous is not None and previous.config == TUNED

    pinned = registry.pin(previous, "operator", "F1 dropped on receipts")
    assert pinned.action == "pinned" and registry.pinned() == TUNED
    assert registry.find(TUNED.digest[:8]) == first
    assert registry.find("2") == second and registry.find("abc") is None
    registry.unpin("operator", "fixed")
    assert registry.pinned() is None
    assert [e.action for e in registry.history()] == [
        "activated",
        "activated",
        "pinned",
        "unpinned",
    ]


def _cli(home: Path, *args: str) -> tuple[int, object]:
    env = {**os.environ, "CUSTODY_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", "ocr", "config", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, json.loads(proc.stdout)


def test_cli_shows_history_and_rolls_back(tmp_path: Path) -> None:
    """``ocr config`` shows the active one; ``rollback`` pins the previous; ``unpin`` clears it."""
    home = tmp_path / "home"
    rc, shown = _cli(home)
    assert rc == 0 and shown == {"active": None, "pinned": None}
    rc, refused = _cli(home, "rollback", "--reason", "nothing yet")
    assert rc == 2 and refused["error"] == "NOTHING_TO_ROLL_BACK"

    from custody.settings import Settings
    from custody.stores import open_raw_store

    registry = ConfigRegistry(open_raw_store(Settings(home=home)))
    registry.observe(TUNED, "worker-1")
    registry.observe(CHANGED, "worker-1")
    rc, shown = _cli(home)
    assert rc == 0 and shown["active"]["digest"] == CHANGED.digest and shown["pinned"] is None
    rc, pinned = _cli(home, "rollback", "--reason", "regression")
    assert rc == 0 and pinned["digest"] == TUNED.digest and pinned["reason"] == "regression"
    rc, shown = _cli(home)
    assert shown["pinned"]["digest"] == TUNED.digest
    rc, history = _cli(home, "history")
    assert [e["action"] for e in history] == ["activated", "activated", "pinned"]
    rc, _ = _cli(home, "unpin", "--reason", "done")
    assert rc == 0 and _cli(home)[1]["pinned"] is None
