"""A helper process per engine lane: the worker's side of the pipe, and its framing.

Both kept-loaded engines (``activities.engines.tess_server``, ``rapid_server``)
run their library in a process of their own, one per lane: started on first
use, pinned to the lane's core, fed one page after another, and closed (killed
if busy) when a page is lost; the next page starts a fresh one. What differs
is only the command, its environment and what the payloads mean.

Every frame a helper writes is ``<BI`` (status, length) and ``length`` bytes:
its first frame answers the start (0: what it runs, 1: why it could not start),
then one per request (0: the answer, 1: why recognition failed). Page text only
ever crosses this pipe; a failure names the library's complaint, never the text.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping

import numpy as np
import numpy.typing as npt

from custody.errors import HelperError

_FRAME = struct.Struct("<BI")
#: A batch request's page count (``batches``).
COUNT = struct.Struct("<I")
_OK, _FAILED = 0, 1


class LaneHelper:
    """One helper process running ``argv``, started on first use and restarted after it fails.

    ``label`` names the library in errors; ``env`` is added to the worker's environment.
    """

    def __init__(
        self, argv: list[str], label: str, env: Mapping[str, str], start_timeout_s: float
    ) -> None:
        self._argv = argv
        self._label = label
        self._env = dict(env)
        self._start_timeout_s = start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self.cpu: int | None = None  # the core it runs on (custody.cpus), None: any

    def pin(self, cpu: int | None) -> None:
        """Run on ``cpu`` from now on (and after a restart); None: any core."""
        self.cpu = cpu
        if self._proc is not None and self._proc.poll() is None:
            _set_cpu(self._proc.pid, cpu)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()  # end of input: an idle helper exits by itself
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            proc.kill()  # busy past its deadline: the only sure way to stop a native library
            proc.wait()

    def _started(self, payload: bytes) -> None:
        """Keep what the helper's start frame reported (its library's version, its runtime)."""

    def _exchange(self, request: bytes, gray: npt.NDArray[np.uint8], timeout_s: float) -> bytes:
        """Send ``request`` and the page's pixels; the answer's payload, by ``timeout_s``."""
        return self._exchange_parts([request, pixels(gray)], timeout_s)

    def _exchange_parts(self, parts: list[bytes | memoryview], timeout_s: float) -> bytes:
        """Send ``parts`` one after another; the answer's payload, by ``timeout_s``."""
        proc = self._running()
        try:
            for part in parts:
                _write_all(_fd(proc.stdin), part)
            status, payload = _read_frame(_fd(proc.stdout), timeout_s)
        except (OSError, HelperError) as err:
            self.close()
            raise HelperError(f"{self._label} helper lost a page: {err}") from None
        if status != _OK:
            complaint = payload.decode("utf-8", "replace")[-300:]
            raise HelperError(f"{self._label} failed: {complaint}")
        return payload

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self.close()
        proc = subprocess.Popen(
            self._argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the library's chatter
            env=os.environ | self._env,
        )
        self._proc = proc  # from here on, close() reaps it and its pipes on every path
        try:
            _set_cpu(proc.pid, self.cpu)
            status, payload = _read_frame(_fd(proc.stdout), self._start_timeout_s)
        except HelperError as err:
            proc.kill()
            self.close()
            raise HelperError(f"{self._label} helper did not start: {err}") from None
        if status != _OK:
            self.close()
            raise HelperError(f"{self._label} helper did not start: {payload.decode()[-300:]}")
        self._started(payload)
        return proc


# -- the helper process's side ------------------------------------------------------


def reply(status: int, payload: bytes) -> None:
    """One frame to the worker (this helper's stdout)."""
    _write_all(sys.stdout.fileno(), _FRAME.pack(status, len(payload)) + payload)


def requests(request: struct.Struct) -> Iterator[tuple[tuple[int, ...], bytes]]:
    """Each request from the worker (stdin): its header's fields, width and height first,
    and the page's ``width * height`` pixels; until the worker closes the pipe or exits."""
    while True:
        try:
            fields = request.unpack(_read_exact(0, request.size, None))
            pixels = _read_exact(0, fields[0] * fields[1], None)
        except HelperError:
            return
        yield fields, pixels


def batches(request: struct.Struct) -> Iterator[list[tuple[tuple[int, ...], bytes]]]:
    """Each batch from the worker: a ``<I>`` count, then that many requests as ``requests``
    reads them (a count of 0 asks for a report); until the worker closes the pipe or exits."""
    while True:
        try:
            (count,) = COUNT.unpack(_read_exact(0, COUNT.size, None))
            batch = []
            for _ in range(count):
                fields = request.unpack(_read_exact(0, request.size, None))
                batch.append((fields, _read_exact(0, fields[0] * fields[1], None)))
        except HelperError:
            return
        yield batch


def pixels(gray: npt.NDArray[np.uint8]) -> memoryview:
    """A page's 8-bit pixels as the bytes a helper reads."""
    return np.ascontiguousarray(gray).data.cast("B")


# -- framing -------------------------------------------------------------------------


def _set_cpu(pid: int, cpu: int | None) -> None:
    if cpu is not None:
        with contextlib.suppress(ProcessLookupError):  # died at once: its start frame says why
            os.sched_setaffinity(pid, {cpu})


def _fd(pipe: object) -> int:
    fileno = getattr(pipe, "fileno", None)
    if fileno is None:
        raise HelperError("helper pipe closed")
    return int(fileno())


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]  # blocking: one call for most pages
    except BrokenPipeError:  # died while taking the page: the same fault as dying on it
        raise HelperError("helper exited") from None


def _read_frame(fd: int, timeout_s: float) -> tuple[int, bytes]:
    deadline = time.monotonic() + timeout_s
    status, length = _FRAME.unpack(_read_exact(fd, _FRAME.size, deadline))
    return status, _read_exact(fd, length, deadline)


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    """``size`` bytes from ``fd``, by ``deadline`` (time.monotonic; None: no deadline)."""
    chunks: list[bytes] = []
    poller = select.poll()  # not select(): a busy worker's descriptors pass 1024
    poller.register(fd, select.POLLIN)
    while size:
        wait_ms = None if deadline is None else int((deadline - time.monotonic()) * 1000)
        if (wait_ms is not None and wait_ms <= 0) or not poller.poll(wait_ms):
            raise HelperError("no answer before the page deadline")
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise HelperError("helper exited")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
