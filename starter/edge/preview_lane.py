"""The preview lane: the edge's bound on previews at work on the OCR workers.

A preview is read where OCR runs (``activities.preview``, through a short
``PreviewWorkflow``), so the edge loads no engine and decodes nothing. What
stays here is the bound, enforced before any work starts: the lane holds
``preview_concurrency`` previews at work and ``preview_queue`` more waiting.
Past that, or when the previews ahead would keep a new one from finishing
within its deadline, a request is refused at once (429 ``PREVIEW_BUSY``), with
a Retry-After from the measured time of a preview. The worker's slots and
engine lanes bound it a second time, across every edge.

A place is given back when the work ends, not when its request does: a
preview whose request passed its deadline keeps its place until its workflow
closes (the activity stops before its next page, or the server gives up on it
a grace later), so abandoned work cannot pile up beyond the bound.

Every call runs on the edge's event loop, so the count needs no lock.
"""

from __future__ import annotations

import math

from custody.errors import Code, UploadError

#: Seconds per preview assumed before one has been measured (one page, two cores).
FIRST_GUESS_S = 3.0
_SMOOTHING = 0.2  # weight of the newest measurement in the running mean


class PreviewLane:
    """``workers`` previews at work and ``queue`` waiting, counted at the edge."""

    def __init__(self, workers: int, queue: int, deadline_s: float = math.inf) -> None:
        self.workers, self.capacity, self.deadline_s = workers, workers + queue, deadline_s
        self.open = 0
        self.mean_s = FIRST_GUESS_S  # one preview's time at work, measured

    def check(self) -> None:
        """Refuse now if a preview would not get in, or not out in time: 429 PREVIEW_BUSY."""
        if self.open >= self.capacity:
            raise self._busy(f"{self.capacity} previews open")
        # A place that cannot answer before the deadline is refused now, not
        # answered 504 once the client has waited the whole deadline for it.
        if self._rounds(self.open + 1) * self.mean_s > self.deadline_s:
            raise self._busy(f"{self.open} previews ahead would pass the deadline")

    def enter(self) -> None:
        """Take a place (429 if none); :meth:`leave` gives it back when the work ends."""
        self.check()
        self.open += 1

    def leave(self, seconds: float | None) -> None:
        """Give a place back; ``seconds`` the work took when it answered (None: it did not)."""
        self.open -= 1
        if seconds is not None:
            self.mean_s += _SMOOTHING * (seconds - self.mean_s)

    def _rounds(self, places: int) -> int:
        """How many previews' time the last of ``places`` open previews takes to finish."""
        return math.ceil(places / self.workers)

    def _busy(self, why: str) -> UploadError:
        # Until the place a new preview needs is free: one round of the lane's work.
        wait = max(1.0, self.mean_s * self._rounds(max(1, self.open - self.workers + 1)))
        return UploadError(429, Code.PREVIEW_BUSY, f"{why}; retry later", wait)
