"""Run ``inspect_path`` on untrusted bytes in a child process with bounded time and memory.

The child is ``python -m activities.inspection``: it imports its decoders, then
reads one order (path and limits) as JSON on stdin and writes one JSON line.
Limits are applied from here with ``prlimit`` on the child's pid *before* the
order is written to its stdin, and the child touches the file only after
reading it, so no byte is decoded unbounded. (``preexec_fn`` would do the same
but is unsafe in a process with threads, and activities run on a thread pool.)

Every document still gets a fresh process, but one is kept started ahead (a
spare, its imports done while it waits), so a document does not wait for an
interpreter to start: that took 0.2-0.4 s of the 0.25-0.45 s a validation cost.
A spare that died or grew old is discarded, never given a document.

How a child ends decides the outcome:

    JSON verdict             -> Inspection, or DocumentRejected(code)
    wall clock, SIGXCPU,     -> DocumentRejected(DECODE_LIMIT)
      SIGKILL, MemoryError
    any other signal         -> DocumentRejected(CORRUPT, "decoder crashed (signal N)")
    cannot start, bad output -> RuntimeError: transient, the activity retries

The child's stderr is discarded, never quoted: a decoder's message can echo
document content.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from activities.inspection import ChildOrder, Inspection, check_size, sniff
from custody.errors import REJECT_CODES, Code, DocumentRejected
from custody.settings import Limits

_ROOT = Path(__file__).resolve().parents[1]  # the directory holding ``activities``
_LIMIT_SIGNALS = frozenset({signal.SIGKILL, signal.SIGXCPU})
_MAX_DETAIL = 200
# Nothing of the worker's environment (store keys) reaches the child. No
# bytecode writes: the child may not create files (RLIMIT_FSIZE is 0).
_ENV = {
    "PYTHONPATH": str(_ROOT),
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LC_ALL": "C.UTF-8",
}


def inspect_untrusted(path: Path, limits: Limits) -> Inspection:
    """Inspect ``path`` in a bounded child process; raise ``DocumentRejected`` on a broken rule."""
    # Size and magic bytes need no decoder: refuse those without starting a child.
    check_size(path, limits)
    sniff(path)
    child = _SPARES.take()
    order = ChildOrder(path=str(path), limits=limits)
    try:
        _bound(child.pid, limits)
        out, _ = child.communicate(
            order.model_dump_json().encode(), timeout=limits.decode_timeout_s
        )
    except subprocess.TimeoutExpired:
        _kill(child)
        raise DocumentRejected(
            Code.DECODE_LIMIT, f"decode exceeded {limits.decode_timeout_s:g} s"
        ) from None
    except BaseException:
        _kill(child)
        raise
    return _outcome(child.returncode, out)


class _Spares:
    """One child started ahead of need; taking it starts the next."""

    def __init__(self, max_age_s: float = 300.0) -> None:
        self._lock = threading.Lock()
        self._spare: tuple[subprocess.Popen[bytes], float] | None = None
        self._max_age_s = max_age_s

    def warm(self) -> None:
        """Start the spare now (a worker at start), so the first document does not wait."""
        with self._lock:
            if self._spare is None:
                self._spare = (_spawn(), time.monotonic())

    def take(self) -> subprocess.Popen[bytes]:
        with self._lock:
            spare, self._spare = self._spare, None
            fresh = _spawn()
            if spare is None or not _usable(spare, self._max_age_s):
                if spare is not None:
                    _kill(spare[0])
                spare, fresh = (fresh, time.monotonic()), _spawn()
            self._spare = (fresh, time.monotonic())
            return spare[0]


def _usable(spare: tuple[subprocess.Popen[bytes], float], max_age_s: float) -> bool:
    child, born = spare
    return child.poll() is None and time.monotonic() - born < max_age_s


_SPARES = _Spares()


def prewarm() -> None:
    """Have an inspection child ready before the first document arrives."""
    _SPARES.warm()


def _spawn() -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "activities.inspection"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=_ROOT,
            env=_ENV,
            start_new_session=True,  # its own process group, killed as one
        )
    except OSError as exc:
        raise RuntimeError(f"cannot start inspection child ({type(exc).__name__})") from exc


def _bound(pid: int, limits: Limits) -> None:
    memory = limits.decode_memory_mb * 1024 * 1024
    cpu = math.ceil(limits.decode_timeout_s) + 1  # SIGXCPU; the wall clock usually fires first
    try:
        resource.prlimit(pid, resource.RLIMIT_AS, (memory, memory))
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))  # a core dump would hold the document
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, 0))  # it has nothing to write
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"cannot bound inspection child ({type(exc).__name__})") from exc


def _kill(child: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole process group, and reap it."""
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(child.pid, signal.SIGKILL)
    child.communicate()


def _outcome(returncode: int, out: bytes) -> Inspection:
    if returncode < 0:
        number = -returncode
        if number in _LIMIT_SIGNALS:
            raise DocumentRejected(Code.DECODE_LIMIT, f"decoder stopped (signal {number})")
        raise DocumentRejected(Code.CORRUPT, f"decoder crashed (signal {number})")
    if returncode != 0:
        raise RuntimeError(f"inspection child exited with status {returncode}")
    reply = _reply(out)
    code = str(reply.get("code"))
    if code in REJECT_CODES:
        raise DocumentRejected(Code(code), str(reply.get("detail", ""))[:_MAX_DETAIL])
    try:
        return Inspection.model_validate(reply["ok"])
    except (KeyError, ValidationError):
        raise RuntimeError(f"inspection child failed ({str(reply.get('error'))[:80]})") from None


def _reply(out: bytes) -> dict[str, object]:
    try:
        reply = json.loads(out.splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError("inspection child gave no verdict") from None
    if not isinstance(reply, dict):
        raise RuntimeError("inspection child gave no verdict")
    return reply
