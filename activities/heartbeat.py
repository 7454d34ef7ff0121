"""Heartbeats from a thread while blocking work runs, for at most its deadline.

A slow page or view on a busy machine must not look like a lost worker; a hung
one must. So the heartbeats go on only up to the work's deadline, after which
they stop and the activity's heartbeat timeout abandons the attempt.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from temporalio import activity


@contextmanager
def heartbeating(
    details: Any, deadline_s: float, name: str, every_s: float = 5.0
) -> Iterator[None]:
    """Heartbeat ``details`` every ``every_s`` from a thread ``name``, for at most ``deadline_s``.

    Outside an activity (a test calling the code directly) nothing is sent.
    """
    stop = threading.Event()
    context = contextvars.copy_context()  # the activity's context lives in contextvars

    def beat() -> None:
        end = time.monotonic() + deadline_s
        while not stop.wait(every_s) and time.monotonic() < end:
            if activity.in_activity():
                activity.heartbeat(details)

    keeper = threading.Thread(target=context.run, args=(beat,), name=name, daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        keeper.join()
