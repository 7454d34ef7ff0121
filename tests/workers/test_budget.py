"""The retry budget: a token bucket per worker process; a retry past it fails fast, coded."""

from __future__ import annotations

from tests.workers.test_breaker import Clock
from workers.budget import RetryBudget


def test_budget_exhausts_after_per_minute_retries() -> None:
    """``per_min`` retries pass at once; the next is refused until time refills the bucket."""
    clock = Clock()
    budget = RetryBudget(3, clock=clock)
    assert [budget.take() for _ in range(4)] == [True, True, True, False]
    clock.now = 20.0  # a third of a minute: one token back
    assert budget.take() is True
    assert budget.take() is False


def test_budget_refills_to_capacity_not_beyond() -> None:
    """A quiet hour does not bank more than one minute's retries."""
    clock = Clock()
    budget = RetryBudget(2, clock=clock)
    clock.now = 3600.0
    assert budget.remaining == 2.0
