"""The circuit breaker: opens after N faults in a row, half-opens after a pause, closes again."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.scratch import StagingArea
from activities.staging import StagingActivities
from custody import ids
from custody.errors import (
    CircuitOpen,
    Code,
    DocumentRejected,
    HelperError,
    ObjectMissing,
    Quarantined,
    StoreUnavailable,
)
from custody.models import StageInput
from custody.stores.local import LocalStore
from workers.breaker import Breaker, State
from workers.guards import GuardedStore, engine_fault, store_fault


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _down() -> None:
    raise StoreUnavailable("store: injected outage")


def _breaker(clock: Clock, changes: list[State] | None = None) -> Breaker:
    def listen(name: str, state: State) -> None:
        if changes is not None:
            changes.append(state)

    return Breaker("store", store_fault, failures=3, open_s=10.0, clock=clock, listener=listen)


def _trip(breaker: Breaker) -> None:
    """Three store faults in a row: enough to open the breaker."""
    for _ in range(3):
        with pytest.raises(StoreUnavailable):
            breaker.call(_down)


def test_breaker_opens_after_consecutive_faults_and_refuses_without_calling() -> None:
    """Three faults in a row open it; then calls fail CIRCUIT_OPEN without reaching the store."""
    clock, changes = Clock(), list[State]()
    breaker = _breaker(clock, changes)
    _trip(breaker)
    calls: list[int] = []
    with pytest.raises(CircuitOpen) as refused:
        breaker.call(calls.append, 1)
    assert calls == []
    assert refused.value.code == "CIRCUIT_OPEN"
    assert breaker.state is State.OPEN and changes == [State.OPEN]


def test_breaker_success_between_faults_keeps_it_closed() -> None:
    """Faults must be consecutive: an answer in between resets the count."""
    breaker = _breaker(Clock())
    for _ in range(2):
        with pytest.raises(StoreUnavailable):
            breaker.call(_down)
    assert breaker.call(lambda: "ok") == "ok"
    for _ in range(2):
        with pytest.raises(StoreUnavailable):
            breaker.call(_down)
    assert breaker.state is State.CLOSED


def test_breaker_half_opens_after_pause_and_closes_on_good_probe() -> None:
    """After ``open_s`` one probe goes through; its success closes the breaker."""
    clock, changes = Clock(), list[State]()
    breaker = _breaker(clock, changes)
    _trip(breaker)
    clock.now = 10.0
    assert breaker.state is State.HALF_OPEN
    assert breaker.call(lambda: 42) == 42
    assert breaker.state is State.CLOSED
    assert changes == [State.OPEN, State.HALF_OPEN, State.CLOSED]


def test_breaker_failed_probe_reopens_for_another_pause() -> None:
    """A probe that faults opens it again at once, for a full ``open_s``."""
    clock = Clock()
    breaker = _breaker(clock)
    _trip(breaker)
    clock.now = 10.0
    with pytest.raises(StoreUnavailable):
        breaker.call(_down)
    assert breaker.state is State.OPEN
    clock.now = 19.0
    assert breaker.state is State.OPEN
    clock.now = 20.0
    assert breaker.state is State.HALF_OPEN


def test_breaker_half_open_lets_one_probe_at_a_time() -> None:
    """While the probe is out, other callers are refused rather than piling onto a sick store."""
    clock = Clock()
    breaker = _breaker(clock)
    _trip(breaker)
    clock.now = 10.0

    def probe() -> str:
        with pytest.raises(CircuitOpen):
            breaker.call(lambda: "second")
        return "first"

    assert breaker.call(probe) == "first"


def test_guarded_store_counts_outages_not_missing_keys(tmp_path: Path) -> None:
    """A missing key is the store answering: it never opens the breaker."""
    store = GuardedStore(LocalStore(tmp_path), _breaker(Clock()))
    for _ in range(5):
        with pytest.raises(ObjectMissing):
            store.get("nothing/here")
    assert store.breaker.state is State.CLOSED
    assert store.create("a/b", b"x") and store.get("a/b") == b"x"
    assert list(store.list("a/")) == ["a/b"]


class DownStore:
    """Stand-in store for fault injection: every call fails as an unreachable backend does
    while ``down``, and is counted, so the test sees which calls reached it."""

    def __init__(self, inner: LocalStore) -> None:
        self.inner, self.down, self.calls = inner, True, 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.down:
                raise StoreUnavailable("store: injected outage")
            return method(*args, **kwargs)

        return call


def test_breaker_around_store_fails_stage_fast_then_recovers(tmp_path: Path) -> None:
    """The real stage activity over a failing stand-in store: STORE_UNAVAILABLE until the
    breaker opens, then CIRCUIT_OPEN without touching the store, and staged once it heals."""
    clock = Clock()
    raw = LocalStore(tmp_path / "objects")
    down = DownStore(raw)
    store = GuardedStore(down, _breaker(clock))
    stage = StagingActivities(store, StagingArea(tmp_path / "staging")).stage
    data = b"%PDF-1.4 breaker test"
    sha = hashlib.sha256(data).hexdigest()
    raw.create(ids.intake_key(sha, "tb"), data)
    inp = StageInput(sha256=sha, tenant="tb", intake_key=ids.intake_key(sha, "tb"))
    codes = []
    for _ in range(4):
        with pytest.raises(ApplicationError) as failed:
            ActivityEnvironment().run(stage, inp)
        codes.append(failed.value.type)
    assert codes == ["STORE_UNAVAILABLE"] * 3 + ["CIRCUIT_OPEN"]
    assert down.calls == 3 and not failed.value.non_retryable
    down.down, clock.now = False, 10.0  # the store is back; the pause is over
    result = ActivityEnvironment().run(stage, inp)
    assert result.source_key == ids.source_key(sha, "tb")
    assert store.breaker.state is State.CLOSED


def test_guarded_store_copies_and_passes_attributes_through(tmp_path: Path) -> None:
    """A copy with its ``inner`` replaced (the ledger's system view) shares the breaker."""
    store = GuardedStore(LocalStore(tmp_path / "a"), _breaker(Clock()))
    clone = copy.copy(store)
    clone.inner = LocalStore(tmp_path / "b")
    assert clone.create("x/y", b"1") and not store.exists("x/y")
    assert clone.breaker is store.breaker
    assert store.root == LocalStore(tmp_path / "a").root


def test_engine_breaker_counts_crashes_not_document_verdicts() -> None:
    """An engine crash or dead helper counts toward opening; a rejection or quarantine does not."""
    breaker = Breaker("ocr_engine", engine_fault, failures=2, clock=Clock())
    verdicts: list[Exception] = [
        Quarantined(Code.LOW_CONFIDENCE, "page 1"),
        DocumentRejected(Code.CORRUPT, "p"),
    ]
    for err in verdicts * 3:
        with pytest.raises(type(err)):
            breaker.call(_raise, err)
    assert breaker.state is State.CLOSED
    for err in (RuntimeError("engine crashed"), HelperError("helper lost a page")):
        with pytest.raises(type(err)):
            breaker.call(_raise, err)
    assert breaker.state is State.OPEN


def _raise(err: Exception) -> None:
    raise err
