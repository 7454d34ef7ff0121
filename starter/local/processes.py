"""Commands that start processes stop every one of them on Ctrl-C, SIGTERM, or any other end.

``custody bench``, ``custody chaos``, ``custody serve`` and ``custody up`` in
the foreground start Temporal dev servers, workers (each in a session of its
own, so a kill takes its children) and OCR helpers. Killed by a plain SIGTERM,
Python runs no ``finally``, so all of them outlived the command. While a
command runs :func:`supervised`:

* SIGTERM does what Ctrl-C does: inside ``asyncio.run`` the main task is
  cancelled, so every ``finally`` and ``async with`` on the way out stops what
  it started (``ChaosStack.close``, ``env.shutdown()``, ``Stack.down``);
* this process is a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a
  helper whose worker died is re-parented here, not to init, so it can still
  be found;
* on the way out, by whatever path, each descendant still alive gets SIGTERM
  (its process group when it leads one), then SIGKILL after a grace period,
  and is reaped;
* should the graceful path hang (a thread that will not finish), a watchdog
  started by the first signal stops the descendants and exits 128 + signal.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

GRACE_S = 10.0
#: How long the graceful path may take after a signal before the watchdog ends it.
WATCHDOG_S = 60.0
_PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Supervision:
    """What stopped the command: the signal's number, or None if it ended on its own."""

    signum: int | None = None

    @property
    def status(self) -> int:
        """The exit status of a stopped command: 128 + the signal (130 for Ctrl-C)."""
        return 128 + (self.signum or signal.SIGINT)


@contextlib.contextmanager
def supervised() -> Iterator[Supervision]:
    """Run the block as a command that owns every process it starts (see the module).

    For a process that is the command (the console script) and its main thread:
    processes that were already below it when the block began are left alone.
    """
    state = Supervision()
    _become_subreaper()
    before = set(descendants())
    previous = signal.signal(signal.SIGTERM, _on_term(state, before))
    try:
        yield state
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop_descendants(spare=before)


def _on_term(state: Supervision, spare: set[int]) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        first = state.signum is None
        state.signum = signum
        if first:
            _watchdog(state, spare)
        interrupt = signal.getsignal(signal.SIGINT)  # asyncio.run's, or KeyboardInterrupt
        if callable(interrupt):
            interrupt(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    return handle


def _watchdog(state: Supervision, spare: set[int]) -> None:
    def force() -> None:
        stop_descendants(spare=spare)
        os._exit(state.status)

    timer = threading.Timer(WATCHDOG_S, force)
    timer.daemon = True
    timer.start()


def stop_descendants(grace_s: float = GRACE_S, spare: Collection[int] = ()) -> list[int]:
    """SIGTERM every live descendant of this process but ``spare``, SIGKILL what remains
    after ``grace_s``, reap them; the PIDs found."""
    found = [pid for pid in descendants() if pid not in spare]
    for pid in found:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _alive(found) and time.monotonic() < deadline:
        _reap()
        time.sleep(0.1)
    late = [pid for pid in descendants() if pid not in spare and pid not in found]
    for pid in _alive(found) + late:
        _signal(pid, signal.SIGKILL)
    _reap()
    return found


def descendants(root: int | None = None) -> list[int]:
    """The live (not zombie) processes below ``root`` (default: this one), from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _stat(stat)
        if fields is not None and fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = [root if root is not None else os.getpid()]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _stat(path: Path) -> list[str] | None:
    """``state`` and ``ppid`` of /proc/PID/stat (the fields after the command's parenthesis)."""
    try:
        text = path.read_text()
    except OSError:  # gone meanwhile
        return None
    return text[text.rfind(")") + 2 :].split()[:2]


def _alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if (f := _stat(Path(f"/proc/{pid}/stat"))) and f[0] != "Z"]


def _signal(pid: int, sig: int) -> None:
    """``sig`` to the process group ``pid`` leads (its children too), else to ``pid`` alone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid and pid != os.getpgrp():
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def _reap() -> None:
    """Collect the exit status of every child that ended (ours, or adopted as subreaper)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _become_subreaper() -> None:
    """Adopt orphaned descendants (Linux); elsewhere the sweep finds only live lineages."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
