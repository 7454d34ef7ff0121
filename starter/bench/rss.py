"""The edge's memory under one large upload: stream a generated body, sample this process's RSS.

The body is generated as it is sent, one reused megabyte at a time, so the
only copy of the gigabyte that ever exists in full is the one the edge stages
(on disk, as it must before it can hash and accept it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import httpx

MB = 1 << 20


async def big_upload(http: httpx.AsyncClient, size_mb: int) -> tuple[float, int]:
    """RSS growth (MB) of this process while ``size_mb`` streams through the edge; the status."""

    async def body() -> AsyncIterator[bytes]:
        chunk = bytearray(os.urandom(MB))
        for i in range(size_mb):
            # A PDF's magic first, then a counter so no two megabytes are alike.
            chunk[:8] = b"%PDF-1.7" if i == 0 else i.to_bytes(8, "big")
            yield bytes(chunk)

    with rss_peak() as peak:
        headers = {"Content-Type": "application/pdf", "Content-Length": str(size_mb * MB)}
        resp = await http.put("/v1/documents", content=body(), headers=headers)
    return peak["growth_mb"], resp.status_code


@contextmanager
def rss_peak() -> Iterator[dict[str, float]]:
    """Sample RSS every 10 ms in a thread; ``growth_mb`` is the peak over the start."""
    out: dict[str, float] = {"growth_mb": 0.0}
    base, stop = rss_mb(), threading.Event()

    def sample() -> None:
        while not stop.wait(0.01):
            out["growth_mb"] = max(out["growth_mb"], rss_mb() - base)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB
