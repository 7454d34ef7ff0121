"""The inspection zygote: decoders imported once, a fresh forked child per document.

``activities.inspect.untrusted`` starts ``python -m activities.inspect.zygote FD``, FD being
this end of a ``SOCK_SEQPACKET`` socket pair, and keeps it for the worker's
life. The zygote never opens a document. For each order, ``F`` with four
descriptors (the order pipe's read end, the verdict pipe's write end, the
status pipe's write end, the document opened read-only), it forks a child that:

1. closes every descriptor but its pipes and its document (the socket, other
   children's pipes), so one document's process cannot reach another's;
2. reads its ``ChildOrder`` (what to do, under which limits) and its document;
3. locks itself down (``activities.inspect.lockdown``: Landlock, own network
   namespace, empty root, unprivileged user, syscall filter, no fork, bounded
   memory and CPU) *before* it decodes a byte;
4. writes one JSON verdict and exits.

The zygote itself is non-dumpable: no child can ptrace it or read its memory.

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
import os
import select
import signal
import socket
import sys
import warnings

from activities.egress.original import originals
from activities.inspect import lockdown
from activities.inspect.identify import identify_marks
from activities.inspect.identify import preload as preload_identify
from activities.inspect.inspection import ChildOrder, _preload, _verdict
from activities.inspect.probe import PROBE_ENV, probe
from activities.inspect.render import END, FRAME, page_budget, send_pages

_UID = int(os.environ.get("CUSTODY_INSPECT_UID", lockdown.NOBODY))
_GID = int(os.environ.get("CUSTODY_INSPECT_GID", lockdown.NOBODY))
_PROBES = os.environ.get(PROBE_ENV) == "1"  # tests only: see activities.inspect.probe
#: In production a child whose sandbox lacks a layer decodes nothing (lockdown.py).
_PRODUCTION = os.environ.get("CUSTODY_ENV") == "production"


def main(fd: int) -> int:
    warnings.simplefilter("ignore")
    _preload()
    preload_identify()  # only in ``custody egress identify``'s own zygote
    lockdown.prepare()
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
    msg, fds, _, _ = socket.recv_fds(sock, 64, 4)
    if not msg:
        return False
    if msg == b"F" and len(fds) == 4:
        order_r, verdict_w, status_w, document = fds
        pid = os.fork()
        if pid == 0:
            _child(order_r, verdict_w, document)  # never returns
        for fd in (order_r, verdict_w, document):
            os.close(fd)
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


def _child(order_r: int, verdict_w: int, document: int) -> None:
    code = 70
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _keep_only({order_r, verdict_w, document})
        with os.fdopen(order_r, "rb") as src:
            order = ChildOrder.model_validate_json(src.read())
        with os.fdopen(document, "rb") as src:  # one byte past the limit is enough to refuse
            data = src.read(order.limits.max_bytes + 1)
        threads = order.kind == "identify" or (order.probe_threads and _PROBES)
        skip = frozenset(order.probe_skip) if _PROBES else frozenset()
        degraded = lockdown.lock_down(order.limits, _cpu_s(order), _UID, _GID, threads, skip)
        missing = lockdown.missing_in_production(degraded) if _PRODUCTION else []
        verdict = (
            _refused(order, missing, verdict_w) if missing else _answer(order, data, verdict_w)
        )
        verdict["degraded"] = degraded
        os.write(verdict_w, (json.dumps(verdict) + "\n").encode())
        code = 0
    finally:
        os._exit(code)  # never back into the zygote's loop, no interpreter teardown


def _cpu_s(order: ChildOrder) -> float:
    # Rendering is bounded per page by the worker's wall clock; CPU covers them all.
    pages = order.limits.max_pages if order.kind in ("render", "layers", "originals") else 1
    return order.limits.decode_timeout_s * pages


def _refused(order: ChildOrder, missing: list[str], verdict_w: int) -> dict[str, object]:
    """Production with a layer missing: not one byte decoded; the pages, if any, end at once."""
    if order.kind in ("render", "layers", "identify", "originals"):
        os.write(verdict_w, FRAME.pack(END, 0, 0))
    return {"code": "SANDBOX_DEGRADED", "detail": ",".join(missing)}


def _answer(order: ChildOrder, data: bytes, verdict_w: int) -> dict[str, object]:
    if order.kind == "lockdown":
        return {"ok": True}  # nothing to decode: the layers it got are the answer
    if order.kind == "probe":
        return {"probe": probe(order)} if _PROBES else {"error": "ProbeRefused"}
    if order.kind in ("render", "layers"):
        limits = order.limits
        budget = page_budget(limits.max_page_pixels, limits.ocr_dpi, order.dpi)
        layers = order.kind == "layers"
        return send_pages(verdict_w, data, order.media_type, order.dpi, order.start, budget, layers)
    if order.kind == "identify":
        return identify_marks(verdict_w, data, order.anchor_pem.encode())
    if order.kind == "originals":
        return _originals(verdict_w, data, order.media_type)
    return _verdict(data, order.limits)


def _originals(verdict_w: int, data: bytes, media_type: str) -> dict[str, object]:
    """Each PDF page's own scan (no pages sent: the end frame, then the verdict)."""
    os.write(verdict_w, FRAME.pack(END, 0, 0))
    try:
        found = originals(data, media_type)
    except Exception as exc:
        return {"error": type(exc).__name__}  # only the type: its message could quote the page
    return {"ok": True, "originals": [o.model_dump() for o in found]}


def _keep_only(keep: set[int]) -> None:
    """Close every descriptor above stderr not in ``keep`` (stdio is /dev/null)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # the listing's own, already closed
                os.close(fd)


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


if __name__ == "__main__":
    os._exit(main(int(sys.argv[1])))
