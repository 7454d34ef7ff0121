"""A throwaway real stack for the chaos harness, with handles to hurt it.

The Temporal dev server (SQLite) and both workers run as separate processes
in a temporary ``CUSTODY_HOME`` on free loopback ports. Their argv comes from
``starter.stack.Stack`` and their PID files live where ``Stack`` looks for
them, so ``Stack.down`` is the last word on cleanup. Unlike ``custody up``,
each process gets its own environment, so one worker can run with a fault
point switched on while the other runs clean.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from custody.settings import Settings
from starter.stack import Service, Stack

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChaosStack:
    """Processes of one chaos run; ``close`` stops every one of them."""

    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.settings = Settings(
            home=home,
            temporal_address=f"127.0.0.1:{free_port()}",
            temporal_ui_port=free_port(),
        )
        self.extra_env = env or {}
        self.stack = Stack(self.settings)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def env(self, faults: str = "", **extra: str) -> dict[str, str]:
        # The runner's own CUSTODY_* must not leak into the stack it builds.
        base = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODY_")}
        return {
            **base,
            "CUSTODY_HOME": str(self.home),
            "CUSTODY_TEMPORAL_ADDRESS": self.settings.temporal_address,
            "CUSTODY_TEMPORAL_UI_PORT": str(self.settings.temporal_ui_port),
            "CUSTODY_LOG_FORMAT": "json",
            "CUSTODY_FAULTS": faults,
            **self.extra_env,
            **extra,
        }

    def service(self, name: str) -> Service:
        return next(s for s in self.stack.services() if s.name == name)

    def start(self, name: str, faults: str = "", **extra: str) -> int:
        """Start one service; returns its PID once it is ready to work."""
        for sub in ("run", "logs", "objects", "staging"):
            (self.home / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        log = self.log_path(name)
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            proc = subprocess.Popen(
                self.service(name).argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(faults, **extra),
                start_new_session=True,  # its own group: a kill takes its children too
                cwd=REPO,
            )
        self.procs[name] = proc
        (self.home / "run" / f"{name}.pid").write_text(str(proc.pid))
        self._wait_ready(name, proc, offset)
        return proc.pid

    def _wait_ready(self, name: str, proc: subprocess.Popen[bytes], offset: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}); see {self.log_path(name)}")
            if self._ready(name, offset):
                return
            time.sleep(0.3)
        raise TimeoutError(f"{name} not ready within {START_TIMEOUT_S:.0f}s")

    def _ready(self, name: str, offset: int) -> bool:
        if name == "temporal":
            host, _, port = self.settings.temporal_address.rpartition(":")
            with socket.socket() as sock:
                sock.settimeout(0.5)
                return sock.connect_ex((host, int(port))) == 0
        # Pollers of a killed worker linger in DescribeTaskQueue, so readiness
        # is read from this process's own log instead.
        with self.log_path(name).open("rb") as f:
            f.seek(offset)
            return b"worker_started" in f.read()

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int:
        """Signal a service's process group; returns the leader's exit status."""
        proc = self.procs.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        return proc.wait(timeout=60)

    def wait_exit(self, name: str, timeout_s: float) -> int:
        """Wait for a service to die on its own (a fault point that kills)."""
        rc = self.procs[name].wait(timeout=timeout_s)
        self.procs.pop(name)
        return rc

    def log_path(self, name: str) -> Path:
        return self.home / "logs" / f"{name}.log"

    def close(self) -> None:
        """Stop workers, then Temporal; reap everything this object started."""
        self.stack.down(timeout_s=15)
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        self.procs.clear()
