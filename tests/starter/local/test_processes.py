"""Commands that start processes leave none behind when stopped by SIGINT or SIGTERM.

Each case runs the real console script (``python -m starter.cli``) in a
session of its own, waits until the processes it starts are up (a Temporal
dev server, workers in sessions of their own, OCR helpers), records every
descendant, signals the command alone, and checks it exits with its status
and that not one recorded process is still alive. Whatever survives is killed
afterwards, so a failing case leaks nothing into the rest of the suite.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from starter.local.processes import descendants

REPO = Path(__file__).resolve().parents[3]
READY_S, STOP_S = 300.0, 150.0


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    sig: signal.Signals
    status: int
    #: Words that must each be in some descendant's command line before the signal.
    started: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{' '.join(self.argv[:2])} {self.sig.name}"


CASES = [
    # An ephemeral dev server, workers in this process: Ctrl-C.
    Case(("bench", "intake", "--big-mb", "64"), signal.SIGINT, 130, ("start-dev",)),
    # The case: a stack of its own (server, both workers in sessions of their own,
    # the OCR worker's helpers) and the bench's own engine helpers.
    Case(
        ("bench", "ocr", "--corpus", "{corpus}", "--engines", "custody", "pipeline"),
        signal.SIGTERM,
        143,
        ("start-dev", "workers.io", "workers.ocr", "rapid_server"),
    ),
    Case(("chaos", "worker-kill"), signal.SIGTERM, 143, ("start-dev", "workers.ocr")),
    # A foreground stack ends this way on purpose: exit 0, everything it started stopped.
    Case(("up",), signal.SIGTERM, 0, ("start-dev", "codec_server", "workers.io", "workers.ocr")),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _wait_started(proc: subprocess.Popen[bytes], words: tuple[str, ...]) -> dict[int, str]:
    """The command's descendants once each word is in one of their command lines."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the command ended early ({proc.returncode})"
        tree = {pid: _cmdline(pid) for pid in descendants(proc.pid)}
        if all(any(w in line for line in tree.values()) for w in words):
            time.sleep(2.0)  # let whatever starts alongside start too, then take them all
            return {pid: _cmdline(pid) for pid in descendants(proc.pid)} | tree
        time.sleep(0.5)
    raise AssertionError(f"not all of {words} started within {READY_S:.0f}s")


def _corpus(corpus: Path, into: Path) -> Path:
    """One scan with its ground truth: the smallest corpus ``bench ocr`` accepts."""
    into.mkdir()
    for name in ("tess_phototest.tif", "tess_phototest.txt"):
        shutil.copy(corpus / "ocr_gt" / name, into / name)
    return into


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_processes_stopped_by_a_signal_leave_no_child_behind(
    case: Case, corpus: Path, tmp_path: Path
) -> None:
    """Signalled while its processes run, the command exits with its status, and no
    process it started (children, their sessions, their helpers) is left alive."""
    scans = _corpus(corpus, tmp_path / "corpus")
    argv = [a.format(corpus=scans) for a in case.argv]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODY_")}
    env |= {
        "CUSTODY_HOME": str(tmp_path / "home"),
        "CUSTODY_TEMPORAL_ADDRESS": f"127.0.0.1:{_free_port()}",
        "CUSTODY_TEMPORAL_UI_PORT": str(_free_port()),
        "CUSTODY_CODEC_PORT": str(_free_port()),
        "CUSTODY_CORPUS": str(corpus),
    }
    log = (tmp_path / "command.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "starter.cli", *argv],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the signal goes to the command alone, as a supervisor's does
    )
    started: dict[int, str] = {}
    try:
        started = _wait_started(proc, case.started)
        proc.send_signal(case.sig)
        status = proc.wait(timeout=STOP_S)
        left = {pid: line for pid, line in started.items() if _alive(pid)}
        tail = (tmp_path / "command.log").read_bytes()[-2000:].decode(errors="replace")
        assert left == {}, tail
        assert status == case.status, tail
    finally:
        for pid in [proc.pid, *started]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        log.close()
