"""The inspection zygote: one warm process, a fresh forked child per document."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

import activities.inspect.untrusted as untrusted
from activities.inspect.inspection import ChildOrder
from activities.inspect.untrusted import inspect_untrusted, prewarm
from custody.settings import Limits

GOOD = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "ocr_gt"
PAGE = GOOD / "tess_phototest.tif"


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _fds(pid: int) -> list[str]:
    """The child's open descriptors; one it closes between the listing and the read is gone."""
    found = []
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            found.append(os.readlink(f"/proc/{pid}/fd/{n}"))
        except FileNotFoundError:  # the child is still settling: closed meanwhile
            continue
    return sorted(found)


# The kernel names a descriptor by its resolved path (shared/ may be a link beside the repo).


def _settled_fds(pid: int, want: int, timeout_s: float = 10.0) -> list[str]:
    deadline = time.monotonic() + timeout_s
    while len(found := _fds(pid)) != want and time.monotonic() < deadline:
        time.sleep(0.01)
    return found


def test_zygote_each_document_a_fresh_child_holding_only_its_pipes() -> None:
    """Two documents, two forked children; each keeps stdio and its own two pipes, nothing else."""
    prewarm()
    zygote = untrusted._ZYGOTE._proc
    assert zygote is not None
    first, second = untrusted._fork(PAGE), untrusted._fork(PAGE)
    try:
        assert first.pid != second.pid
        assert _parent(first.pid) == _parent(second.pid) == zygote.pid
        for child in (first, second):
            # /dev/null three times, its order pipe, its verdict pipe and its
            # document: not the zygote's socket, not the other child's pipes.
            fds = _settled_fds(child.pid, 6)
            assert fds.count("/dev/null") == 3, fds
            assert sorted(f for f in fds if f != "/dev/null" and f[:5] != "pipe:") == [
                str(PAGE.resolve())
            ]
            assert sum(f[:5] == "pipe:" for f in fds) == 2, fds
        order = ChildOrder(limits=Limits()).model_dump_json().encode()
        for child in (first, second):
            assert b'"ok"' in (child.verdict(order, 30.0) or b"")
            assert os.waitstatus_to_exitcode(child.status()) == 0
    finally:
        first.close()
        second.close()


def test_zygote_killed_is_started_again() -> None:
    """A zygote that died is replaced on the next document, which still gets its verdict."""
    prewarm()
    dead = untrusted._ZYGOTE._proc
    assert dead is not None
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait(timeout=10)
    assert inspect_untrusted(PAGE, Limits()).pages == 1
    fresh = untrusted._ZYGOTE._proc
    assert fresh is not None and fresh.pid != dead.pid and fresh.poll() is None


def test_zygote_pipes_numbered_past_select_ceiling() -> None:
    """A worker holding over 1024 descriptors still gets verdicts (poll, not select)."""
    held: list[int] = []
    try:
        while len(held) < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        assert inspect_untrusted(PAGE, Limits()).pages == 1
    finally:
        for fd in held:
            os.close(fd)


def test_zygote_that_cannot_start_leaks_no_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    """If no zygote can be started the call fails as transient and keeps no pipe open."""
    zygote = untrusted._Zygote()

    def cannot(*args: object, **kwargs: object) -> None:
        raise OSError("no processes left")

    monkeypatch.setattr(untrusted.subprocess, "Popen", cannot)  # fault injected: fork refused
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(RuntimeError, match="cannot start inspection zygote"):
            zygote.fork(PAGE)
    assert len(os.listdir("/proc/self/fd")) == before
