"""The chaos stack's own start: the one race it retries, and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from starter.chaos.harness import ChaosStack


def _failing(errors: list[str]) -> object:
    """A stand-in start (a fault injected on purpose): raises each error in turn, then
    returns a PID."""

    def start(self: ChaosStack, name: str, faults: str = "", **extra: str) -> int:
        if errors:
            raise RuntimeError(errors.pop(0))
        return 4242

    return start


def test_the_dev_server_is_started_again_when_its_http_port_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "bind: address already in use" from the dev server (its HTTP API's port, picked
    by the server, taken by another worker's) is tried again, twice at most."""
    stack = ChaosStack(tmp_path)
    taken = "temporal exited (1): ...listen tcp 127.0.0.1:36485: bind: address already in use"
    monkeypatch.setattr(ChaosStack, "_start", _failing([taken, taken]))
    assert stack.start("temporal") == 4242
    monkeypatch.setattr(ChaosStack, "_start", _failing([taken, taken, taken]))
    with pytest.raises(RuntimeError, match="address already in use"):
        stack.start("temporal")


def test_other_start_failures_are_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any other exit fails at once."""
    stack = ChaosStack(tmp_path)
    monkeypatch.setattr(ChaosStack, "_start", _failing(["temporal exited (1): bad flag", ""]))
    with pytest.raises(RuntimeError, match="bad flag"):
        stack.start("temporal")
    monkeypatch.setattr(ChaosStack, "_start", _failing(["worker-io exited (1): bad key", ""]))
    with pytest.raises(RuntimeError, match="bad key"):
        stack.start("worker-io")


def test_a_worker_is_started_again_when_its_metrics_port_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's Prometheus exporter (port picked here, taken by another test
    worker's stack before the bind: seen in CI) is tried again like the dev server."""
    stack = ChaosStack(tmp_path)
    taken = (
        "worker-io exited (1): ...ValueError: Failed starting Prometheus exporter: "
        "Address already in use (os error 98)"
    )
    monkeypatch.setattr(ChaosStack, "_start", _failing([taken]))
    assert stack.start("worker-io") == 4242
