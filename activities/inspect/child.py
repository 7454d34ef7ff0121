"""The worker's side of one forked inspection child: its three pipes and their deadlines."""

from __future__ import annotations

import os
import select
import time


class Child:
    """The worker's ends of one forked child's three pipes."""

    def __init__(self, pid: int, order_w: int, verdict_r: int, status_r: int) -> None:
        self.pid, self._order_w, self._verdict_r, self._status_r = pid, order_w, verdict_r, status_r

    def verdict(self, order: bytes, timeout_s: float) -> bytes | None:
        """Send the order; the child's output once it closes it, or None at the deadline."""
        self.send(order)
        deadline = time.monotonic() + timeout_s
        chunks: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not _readable(self._verdict_r, left):
                return None
            chunk = os.read(self._verdict_r, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)

    def send(self, order: bytes) -> None:
        """Write the order and close the pipe: the child reads to EOF."""
        with os.fdopen(self._order_w, "wb") as sink:
            self._order_w = -1
            sink.write(order)

    def read(self, size: int, timeout_s: float) -> bytes | None:
        """Exactly ``size`` bytes of the child's output; fewer at its end, None at the deadline."""
        deadline = time.monotonic() + timeout_s
        chunks: list[bytes] = []
        while size > 0:
            left = deadline - time.monotonic()
            if left <= 0 or not _readable(self._verdict_r, left):
                return None
            chunk = os.read(self._verdict_r, min(size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def status(self, timeout_s: float = 30.0) -> int:
        """The child's wait status, as the zygote reaped it."""
        if not _readable(self._status_r, timeout_s):
            raise RuntimeError("inspection zygote did not report the child's end")
        line = os.read(self._status_r, 64)
        if not line.strip():
            raise RuntimeError("inspection zygote went away")
        return int(line)

    def close(self) -> None:
        for fd in (self._order_w, self._verdict_r, self._status_r):
            if fd >= 0:
                os.close(fd)
        self._order_w = self._verdict_r = self._status_r = -1


def _readable(fd: int, timeout_s: float) -> bool:
    # poll, not select: a busy worker's descriptors can pass select()'s 1024 ceiling.
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(max(0, int(timeout_s * 1000))))
