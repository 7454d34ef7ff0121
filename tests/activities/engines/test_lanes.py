"""Engine lanes: only the engine call holds one, and a page waiting for one heartbeats."""

from __future__ import annotations

import threading
import time

import pytest

from activities.engines.lanes import EngineLanes


def test_lanes_never_run_more_engines_than_lanes_and_waiters_heartbeat() -> None:
    """Four pages on one lane run one at a time; those queued beat while they wait."""
    lanes = EngineLanes(1, beat_every_s=0.02)
    peak, beats, waited = [0], [0], []
    lock = threading.Lock()

    def beat() -> None:
        with lock:
            beats[0] += 1

    def page() -> None:
        with lanes.lane(beat) as seconds:
            waited.append(seconds)
            peak[0] = max(peak[0], lanes.busy)
            time.sleep(0.1)

    threads = [threading.Thread(target=page) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 1 and lanes.busy == 0
    assert sorted(waited)[0] < 0.05 and sorted(waited)[-1] >= 0.25  # the last waited for three
    assert beats[0] >= 5


def test_lanes_released_when_the_engine_raises() -> None:
    """A page whose engine call fails gives its lane back."""
    lanes = EngineLanes(1)
    with pytest.raises(RuntimeError), lanes.lane(lambda: None):
        raise RuntimeError("engine failed")
    with lanes.lane(lambda: None) as waited:
        assert waited < 1 and lanes.busy == 1


def test_lanes_cancelled_wait_takes_no_lane() -> None:
    """A wait cancelled through its heartbeat leaves every lane free."""
    lanes = EngineLanes(1, beat_every_s=0.01)

    def cancelled() -> None:
        raise TimeoutError("attempt cancelled")

    with lanes.lane(lambda: None):
        with pytest.raises(TimeoutError), lanes.lane(cancelled):
            pass
        assert lanes.busy == 1
    assert lanes.busy == 0
    with pytest.raises(ValueError):
        EngineLanes(0)
