"""The inspection zygote: decoders imported once, a fresh forked child per document.

``activities.inspect.untrusted`` starts ``python -m activities.inspect.zygote FD``, FD being
this end of a ``SOCK_SEQPACKET`` socket pair, and keeps it for the worker's
life. The zygote never opens a document. For each order, ``F`` with three
descriptors (the order pipe's read end, the verdict pipe's write end, the
status pipe's write end), it forks a child that:

1. closes every descriptor but its order and verdict pipes (the socket, other
   children's pipes), so one document's process cannot reach another's;
2. reads its ``ChildOrder`` (a path and limits, no document bytes);
3. bounds itself (address space, CPU seconds, no core file, no file writes)
   *before* it opens the file, so no byte is decoded unbounded;
4. writes one JSON verdict and exits.

The zygote answers with the child's pid, reaps it when it ends and writes its
wait status to that child's status pipe, which is how the worker tells a
verdict from a crash or a limit. ``K PID`` kills a child the zygote has not
reaped yet, so a wall-clock kill can never reach a recycled pid.

Why: a freshly spawned interpreter spent 0.25-0.35 s of CPU per document
importing pydantic, Pillow and pdfium, more than the inspection itself, and
on a two-core box that CPU came out of OCR. A fork of a warm zygote costs
about a millisecond and keeps the isolation: each document in a process of
its own that dies with it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import select
import signal
import socket
import sys
import warnings
from pathlib import Path

from activities.inspect.inspection import ChildOrder, _preload, _verdict
from custody.limits import PolicyLimits


def main(fd: int) -> int:
    warnings.simplefilter("ignore")
    _preload()
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    for end in (wake_r, wake_w):
        os.set_blocking(end, False)
    signal.set_wakeup_fd(wake_w)  # SIGCHLD wakes select(): children are reaped at once
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, int] = {}  # pid -> its status pipe
    while True:
        ready, _, _ = select.select([sock.fileno(), wake_r], [], [])
        if wake_r in ready:
            while _drained(wake_r):
                pass
        _reap(children)
        if sock.fileno() in ready and not _serve(sock, children):
            for pid in children:  # the worker is gone: so is its work
                os.kill(pid, signal.SIGKILL)
            return 0


def _serve(sock: socket.socket, children: dict[int, int]) -> bool:
    """One request; False once the worker has closed its end."""
    msg, fds, _, _ = socket.recv_fds(sock, 64, 3)
    if not msg:
        return False
    if msg == b"F" and len(fds) == 3:
        order_r, verdict_w, status_w = fds
        pid = os.fork()
        if pid == 0:
            _child(order_r, verdict_w)  # never returns
        os.close(order_r)
        os.close(verdict_w)
        children[pid] = status_w
        sock.send(str(pid).encode())
        return True
    for fd in fds:
        os.close(fd)
    victim = int(msg[2:]) if msg.startswith(b"K ") else None
    if victim in children:  # only an unreaped child: its pid cannot have been reused
        os.kill(victim, signal.SIGKILL)
    return True


def _reap(children: dict[int, int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = children.pop(pid, None)
        if fd is not None:
            # OSError: the worker stopped waiting (it timed out or went away).
            with contextlib.suppress(OSError):
                os.write(fd, f"{status}\n".encode())
            os.close(fd)


def _child(order_r: int, verdict_w: int) -> None:
    code = 70
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _keep_only({order_r, verdict_w})
        with os.fdopen(order_r, "rb") as src:
            order = ChildOrder.model_validate_json(src.read())
        _bound(order.limits)
        verdict = _verdict(Path(order.path), order.limits)
        os.write(verdict_w, (json.dumps(verdict) + "\n").encode())
        code = 0
    finally:
        os._exit(code)  # never back into the zygote's loop, no interpreter teardown


def _keep_only(keep: set[int]) -> None:
    """Close every descriptor above stderr not in ``keep`` (stdio is /dev/null)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # the listing's own, already closed
                os.close(fd)


def _bound(limits: PolicyLimits) -> None:
    memory = limits.decode_memory_mb * 1024 * 1024
    cpu = math.ceil(limits.decode_timeout_s) + 1  # SIGXCPU; the wall clock usually fires first
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a core dump would hold the document
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # it has nothing to write


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


if __name__ == "__main__":
    os._exit(main(int(sys.argv[1])))
