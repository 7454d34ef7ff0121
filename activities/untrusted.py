"""Run ``inspect_path`` on untrusted bytes in a child process with bounded time and memory.

The child is ``python -m activities.inspection PATH``: it reads the limits as
JSON on stdin and writes one JSON line. Limits are applied from here with
``prlimit`` on the child's pid *before* the limits are written to its stdin, and
the child touches the file only after reading them, so no byte is decoded
unbounded. (``preexec_fn`` would do the same but is unsafe in a process with
threads, and activities run on a thread pool.)

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
from pathlib import Path

from pydantic import ValidationError

from activities.inspection import Inspection, check_size, sniff
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
    child = _spawn(path)
    try:
        _bound(child.pid, limits)
        out, _ = child.communicate(
            limits.model_dump_json().encode(), timeout=limits.decode_timeout_s
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


def _spawn(path: Path) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "activities.inspection", str(path)],
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
