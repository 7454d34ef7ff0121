"""A throwaway real stack for the chaos harness, with handles to hurt it.

The Temporal dev server (SQLite) and both workers run as separate processes
in a temporary ``CUSTODY_HOME`` on free loopback ports. Their argv comes from
``starter.local.stack.Stack`` and their PID files live where ``Stack`` looks for
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
import urllib.request
from pathlib import Path

from custody.settings import Settings
from starter.chaos.outside import S3Endpoint, SmallDisk, free_port
from starter.local.stack import Service, Stack

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0
_BIND_TRIES = 3
_IN_USE = "address already in use"
WORKER_METRICS = {"worker-io": "CUSTODY_IO_METRICS_PORT", "worker-ocr": "CUSTODY_OCR_METRICS_PORT"}


class ChaosStack:
    """Processes of one chaos run; ``close`` stops every one of them."""

    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.settings = Settings(
            home=home,
            temporal_address=f"127.0.0.1:{free_port()}",
            temporal_ui_port=free_port(),
            allow_plaintext=True,  # a throwaway stack run without keys, on purpose
        )
        self.extra_env = env or {}
        self.stack = Stack(self.settings)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        # Prometheus endpoints (the dev server's, each worker's): scanned for leaks too.
        # A worker gets a fresh port at every start, never one a dead one held.
        self.metrics_ports: dict[str, int] = {"temporal": free_port()}
        self.s3: S3Endpoint | None = None
        self.disks: list[SmallDisk] = []

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
        """Start one service; returns its PID once it is ready to work.

        Every port a service binds is picked free before it starts (the dev server's HTTP
        API by the server, each worker's Prometheus port here), and another process on
        the box (a second test worker's stack) may take it between the pick and the bind:
        that start, and only that, is tried again, up to ``_BIND_TRIES`` times, each with
        fresh ports."""
        for _ in range(_BIND_TRIES - 1):
            try:
                return self._start(name, faults, **extra)
            except RuntimeError as err:
                if _IN_USE not in str(err).lower():
                    raise
        return self._start(name, faults, **extra)

    def _start(self, name: str, faults: str = "", **extra: str) -> int:
        for sub in ("run", "logs", "objects", "staging"):
            (self.home / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        log = self.log_path(name)
        offset = log.stat().st_size if log.exists() else 0
        if name in WORKER_METRICS:
            self.metrics_ports[name] = free_port()
            extra = {WORKER_METRICS[name]: str(self.metrics_ports[name]), **extra}
        with log.open("ab") as out:
            argv = self.service(name).argv
            if name == "temporal":
                argv = [*argv, "--metrics-port", str(self.metrics_ports[name])]
            proc = subprocess.Popen(
                argv,
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
                # The log's end says why (workers log codes and events, no document text).
                tail = self.log_path(name).read_bytes()[offset:][-600:].decode(errors="replace")
                raise RuntimeError(f"{name} exited ({proc.returncode}): ...{tail}")
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

    def metrics(self, name: str = "temporal") -> str:
        """A service's ``/metrics`` text (empty if it cannot be read)."""
        url = f"http://127.0.0.1:{self.metrics_ports[name]}/metrics"
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310 (loopback)
                return str(resp.read().decode("utf-8", errors="replace"))
        except OSError:
            return ""

    def s3_endpoint(self) -> S3Endpoint:
        """moto's S3 server for this run, started on first use."""
        if self.s3 is None:
            self.s3 = S3Endpoint()
            self.s3.start()
        return self.s3

    def small_disk(self, name: str, size_kib: int) -> SmallDisk:
        disk = SmallDisk(self.home / "disks" / name, size_kib)
        self.disks.append(disk)
        return disk

    def staging_roots(self) -> list[Path]:
        return [self.settings.staging_path, *(d.path for d in self.disks if d.mounted)]

    def close(self) -> None:
        """Stop workers, then Temporal; reap everything this object started."""
        self.stack.down(timeout_s=15)
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        self.procs.clear()
        # Only once no worker can still hold a file on them.
        for disk in self.disks:
            disk.unmount()
        if self.s3 is not None:
            self.s3.stop()
