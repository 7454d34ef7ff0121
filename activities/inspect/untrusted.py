"""Run ``inspect_path`` on untrusted bytes in a child process with bounded time and memory.

Every document gets a fresh process, forked from a warm zygote
(``activities.inspect.zygote``) that imported the decoders once and never opens a
document: this process opens it read-only and hands the child the descriptor.
The child reads it, then locks itself down (``activities.inspect.lockdown``:
no network, empty root, unprivileged user, syscall filter, no fork, bounded
address space and CPU seconds) before it decodes a byte; the wall clock is kept from
here, and a child still running at the deadline is killed through the zygote.
Spawning an interpreter per document instead cost 0.25-0.35 s of CPU each
(imports), which on a two-core box came out of OCR; a fork costs about a
millisecond. (``preexec_fn`` in this process would be unsafe: activities run
on a thread pool.)

How a child ends decides the outcome:

    JSON verdict             -> Inspection, or DocumentRejected(code)
    SANDBOX_DEGRADED         -> ConfigurationError: production, a layer missing
                                (nothing decoded; retried, then quarantined)
    wall clock, SIGXCPU,     -> DocumentRejected(DECODE_LIMIT)
      SIGKILL, MemoryError
    any other signal         -> DocumentRejected(CORRUPT, "decoder crashed (signal N)")
    cannot start, bad output -> RuntimeError: transient, the activity retries

The child's stdout and stderr are discarded, never quoted: a decoder's message can echo
document content.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import structlog
from pydantic import ValidationError

from activities.inspect.child import Child as _Child
from activities.inspect.inspection import ChildOrder, Inspection, check_size, sniff
from custody.errors import REJECT_CODES, Code, ConfigurationError, DocumentRejected
from custody.settings import Limits

_ROOT = Path(__file__).resolve().parents[2]  # the directory holding ``activities``
_LIMIT_SIGNALS = frozenset({signal.SIGKILL, signal.SIGXCPU})
_MAX_DETAIL = 200
# Nothing of the worker's environment (store keys) reaches the child. No
# bytecode writes: the child may not create files (RLIMIT_FSIZE is 0).
_ENV = {
    "PYTHONPATH": str(_ROOT),
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LC_ALL": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",  # numpy's pool: a thread per core, for nothing, in the zygote
}


def inspect_untrusted(path: Path, limits: Limits) -> Inspection:
    """Inspect ``path`` in a bounded child process; raise ``DocumentRejected`` on a broken rule."""
    # Size and magic bytes need no decoder: refuse those without starting a child.
    check_size(path, limits)
    sniff(path)
    order = ChildOrder(limits=limits).model_dump_json().encode()
    child = _fork(path)
    try:
        out = child.verdict(order, limits.decode_timeout_s)
        if out is None:  # past the deadline: killed, and reaped before we answer
            _ZYGOTE.kill(child.pid)
        status = child.status()
    except BaseException:
        _ZYGOTE.kill(child.pid)
        raise
    finally:
        child.close()
    if out is None:
        raise DocumentRejected(Code.DECODE_LIMIT, f"decode exceeded {limits.decode_timeout_s:g} s")
    return _outcome(os.waitstatus_to_exitcode(status), out)


class _Zygote:
    """One warm ``activities.inspect.zygote`` per worker process, restarted if it dies."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self._extra = env or {}  # tests: a zygote that honours probe orders
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None

    def warm(self) -> None:
        with self._lock:
            self._ensure()

    def fork(self, document: Path | bytes) -> _Child:
        """A fresh child holding ``document`` open: it reads it, then is locked down.

        Bytes (a file given to ``custody egress identify``) go in an anonymous
        memory file, so they need no path the child could be pointed at.
        """
        order_r, order_w = os.pipe()
        verdict_r, verdict_w = os.pipe()
        status_r, status_w = os.pipe()
        reply = b""
        try:
            doc = _open(document)
        except OSError:
            for fd in (order_r, order_w, verdict_r, verdict_w, status_r, status_w):
                os.close(fd)
            raise
        try:
            with self._lock:
                sock = self._ensure()
                try:
                    socket.send_fds(sock, [b"F"], [order_r, verdict_w, status_w, doc])
                    reply = sock.recv(32)
                except OSError:
                    pass
                if not reply:
                    self._stop()
        finally:
            # The child's ends are the zygote's now (or nobody's); ours go if no child came.
            ours = () if reply else (order_w, verdict_r, status_r)
            for fd in (order_r, verdict_w, status_w, doc, *ours):
                os.close(fd)
        if not reply:
            raise RuntimeError("inspection zygote gave no child")  # transient: retried
        return _Child(int(reply), order_w, verdict_r, status_r)

    def kill(self, pid: int) -> None:
        with self._lock, contextlib.suppress(OSError):
            if self._sock is not None:
                self._sock.send(b"K %d" % pid)

    def _ensure(self) -> socket.socket:
        if self._sock is not None and self._proc is not None and self._proc.poll() is None:
            return self._sock
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "activities.inspect.zygote", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # a decoder's output goes nowhere
                stderr=subprocess.DEVNULL,
                cwd=_ROOT,
                env={**_ENV, **_passed_on(), **self._extra},
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            raise RuntimeError(f"cannot start inspection zygote ({type(exc).__name__})") from exc
        finally:
            theirs.close()
        self._sock = ours
        return ours

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()  # the zygote sees EOF, kills its children, exits
            self._sock = None
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
            self._proc = None


_ZYGOTE = _Zygote()


def _open(document: Path | bytes) -> int:
    if isinstance(document, Path):
        return os.open(document, os.O_RDONLY | os.O_CLOEXEC)
    fd = os.memfd_create("custody-document", os.MFD_CLOEXEC)
    try:
        view = memoryview(document)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def _fork(document: Path) -> _Child:
    return _ZYGOTE.fork(document)


def _kill(pid: int) -> None:
    _ZYGOTE.kill(pid)


def _passed_on() -> dict[str, str]:
    """The operator's choice of the child's user and group, if any (default ``nobody``),
    and the environment: in production a child missing a sandbox layer decodes nothing."""
    names = ("CUSTODY_INSPECT_UID", "CUSTODY_INSPECT_GID", "CUSTODY_ENV")
    return {name: os.environ[name] for name in names if name in os.environ}


def prewarm() -> None:
    """Start the zygote before the first document arrives."""
    _ZYGOTE.warm()


def _outcome(returncode: int, out: bytes) -> Inspection:
    reply = child_reply(returncode, out)
    try:
        return Inspection.model_validate(reply["ok"])
    except (KeyError, ValidationError):
        raise RuntimeError(f"inspection child failed ({str(reply.get('error'))[:80]})") from None


def child_reply(returncode: int, out: bytes) -> dict[str, object]:
    """The child's JSON verdict, once its end and its code say it is no rejection."""
    if returncode < 0:
        number = -returncode
        if number in _LIMIT_SIGNALS:
            raise DocumentRejected(Code.DECODE_LIMIT, f"decoder stopped (signal {number})")
        raise DocumentRejected(Code.CORRUPT, f"decoder crashed (signal {number})")
    if returncode != 0:
        raise RuntimeError(f"inspection child exited with status {returncode}")
    reply = _reply(out)
    _note_degraded(reply.get("degraded"))
    code = str(reply.get("code"))
    if code == Code.SANDBOX_DEGRADED:
        detail = f"sandbox layers missing: {str(reply.get('detail', ''))[:_MAX_DETAIL]}"
        raise ConfigurationError(Code.SANDBOX_DEGRADED, detail)
    if code in REJECT_CODES:
        raise DocumentRejected(Code(code), str(reply.get("detail", ""))[:_MAX_DETAIL])
    return reply


def _note_degraded(degraded: object) -> None:
    """Say once per process which sandbox layers this platform refused (codes only)."""
    codes = tuple(sorted(str(code) for code in degraded)) if isinstance(degraded, list) else ()
    if codes and codes not in _DEGRADED_SEEN:
        _DEGRADED_SEEN.add(codes)
        structlog.get_logger("custody.inspect").warning("sandbox_degraded", layers=",".join(codes))


_DEGRADED_SEEN: set[tuple[str, ...]] = set()


def _reply(out: bytes) -> dict[str, object]:
    try:
        reply = json.loads(out.splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError("inspection child gave no verdict") from None
    if not isinstance(reply, dict):
        raise RuntimeError("inspection child gave no verdict")
    return reply
