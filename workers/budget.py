"""A retry budget per worker process: retries are a share of capacity, not a right.

Each activity's retry policy is sensible alone; together, in an outage, every
running document retries at once and the retries become the load that keeps
the dependency down. The budget is a token bucket: ``per_min`` retries a minute,
refilled continuously, bursting to ``per_min``. Each retry attempt (attempt 2
and later) takes a token before it runs; when none is left the attempt fails
at once with ``RETRY_BUDGET_EXHAUSTED`` (a quarantine code, so non-retryable)
without touching the store or the engine. The document is kept with its source
for a person to release once the incident is over, instead of feeding it.

First attempts never take a token: new work is admission's to bound. Recording
a document's outcome (``custody.conclude``) and the release workflow's steps are
exempt: an outcome that is never recorded is worse than a retry.

Exported as ``custody_retry_budget_remaining`` (gauge) and
``custody_retry_budget_exhausted_total{activity}`` (workers.metrics).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: The document steps whose retries the budget governs.
BUDGETED = frozenset(
    {"custody.stage", "custody.validate", "custody.ocr", "custody.check", "custody.publish"}
)


class RetryBudget:
    def __init__(self, per_min: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_min)
        self._rate_s = per_min / 60.0
        self._clock = clock
        self._tokens = self.capacity
        self._at = clock()
        self._lock = threading.Lock()

    @property
    def remaining(self) -> float:
        with self._lock:
            self._refill()
            return self._tokens

    def take(self) -> bool:
        """Spend one retry; False when the budget is spent (the retry must not run)."""
        with self._lock:
            self._refill()
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._at) * self._rate_s)
        self._at = now
