"""Circuit breakers around the object store and the OCR engine.

    closed --N consecutive faults--> open --open_s later--> half-open
      ^                                ^                        |
      |                                +------ probe fails -----+
      +------------------ probe succeeds -----------------------+

While open, a call fails at once with :class:`custody.errors.CircuitOpen`
(``CIRCUIT_OPEN``, transient): the activity's retry policy backs off instead of
every attempt waiting out the same dead dependency, and the dependency gets
room to recover. Half-open lets one probe call through; the others are refused
until it answers. One breaker per dependency per worker process. Only faults
count (a store that cannot be reached, an engine that crashes): an answer such
as "no object at that key" proves the dependency is up.

State is exported as ``custody_breaker_state{breaker}`` (0 closed, 1 half-open,
2 open) and ``custody_breaker_opened_total{breaker}`` (workers.metrics).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import IntEnum
from typing import ParamSpec, TypeVar

import structlog

from custody.errors import CircuitOpen

P = ParamSpec("P")
R = TypeVar("R")

log = structlog.get_logger("custody.worker")


class State(IntEnum):
    """The gauge's values: higher is worse."""

    CLOSED = 0
    HALF_OPEN = 1
    OPEN = 2


#: Told of every state change (the metrics); must not raise.
Listener = Callable[[str, State], None]


class Breaker:
    """Thread-safe: sync activities call it from the worker's executor threads."""

    def __init__(
        self,
        name: str,
        is_fault: Callable[[BaseException], bool],
        *,
        failures: int = 5,
        open_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        listener: Listener | None = None,
    ) -> None:
        self.name, self._is_fault = name, is_fault
        self._failures, self._open_s, self._clock = failures, open_s, clock
        self._listener = listener
        self._lock = threading.Lock()
        self._state = State.CLOSED
        self._consecutive = 0
        self._opened_at = 0.0
        self._probing = False

    @property
    def state(self) -> State:
        with self._lock:
            return self._current()

    def call(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn`` through the breaker; :class:`CircuitOpen` while it is open."""
        self._admit()
        try:
            result = fn(*args, **kwargs)
        except BaseException as err:
            self._record(ok=not self._is_fault(err))
            raise
        self._record(ok=True)
        return result

    def _admit(self) -> None:
        with self._lock:
            state = self._current()
            if state is State.CLOSED:
                return
            if state is State.HALF_OPEN and not self._probing:
                self._probing = True  # this call is the probe
                return
        raise CircuitOpen(detail=f"breaker {self.name} is {state.name.lower()}")

    def _record(self, *, ok: bool) -> None:
        with self._lock:
            was = self._current()
            self._probing = False
            if ok:
                self._consecutive = 0
                self._set(State.CLOSED)
                return
            self._consecutive += 1
            if was is State.HALF_OPEN or self._consecutive >= self._failures:
                self._opened_at = self._clock()
                self._set(State.OPEN)

    def _current(self) -> State:
        # Open lapses into half-open by time alone: no timer thread to keep.
        if self._state is State.OPEN and self._clock() - self._opened_at >= self._open_s:
            self._set(State.HALF_OPEN)
        return self._state

    def _set(self, state: State) -> None:
        if state is self._state:
            return
        self._state = state
        log.warning("breaker_state", breaker=self.name, state=state.name.lower())
        if self._listener is not None:
            self._listener(self.name, state)
