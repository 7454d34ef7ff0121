"""A one-line progress bar on stderr for ``custody submit --wait``, shown only on a terminal."""

from __future__ import annotations

import asyncio
import sys
import time

from custody.models import DocumentResult


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.enabled = sys.stderr.isatty()

    async def track(
        self, tasks: dict[asyncio.Future[DocumentResult], int], timeout: float
    ) -> tuple[set[asyncio.Future[DocumentResult]], set[asyncio.Future[DocumentResult]]]:
        deadline = time.monotonic() + timeout
        done: set[asyncio.Future[DocumentResult]] = set()
        pending = set(tasks)
        while pending and time.monotonic() < deadline:
            self._draw(len(done))
            finished, pending = await asyncio.wait(
                pending,
                timeout=min(1.0, deadline - time.monotonic()),
                return_when=asyncio.FIRST_COMPLETED,
            )
            done |= finished
        self._draw(len(done))
        if self.enabled:
            sys.stderr.write("\n")
        return done, pending

    def _draw(self, done: int) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // max(self.total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} done")
        sys.stderr.flush()
