"""``custody up``/``down``: the embedded stack as a user runs it, on its own ports and home."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from custody import cpus
from starter.bench.sched import helper_pids

SERVICES = {"temporal", "codec-server", "witness", "worker-io", "worker-ocr"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli(env: dict[str, str], *args: str, timeout: float = 400) -> tuple[int, dict]:  # type: ignore[type-arg]
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, json.loads(proc.stdout or "{}")


def test_stack_up_submit_down_up_keeps_everything(tmp_path: Path, corpus: Path) -> None:
    """Documents published before ``down`` are still there after ``up`` on the same SQLite file."""
    env = {
        **os.environ,
        "CUSTODY_HOME": str(tmp_path / "home"),
        "CUSTODY_TEMPORAL_ADDRESS": f"127.0.0.1:{_free_port()}",
        "CUSTODY_TEMPORAL_UI_PORT": str(_free_port()),
        "CUSTODY_CODEC_PORT": str(_free_port()),
        "CUSTODY_WITNESS_PORT": str(_free_port()),
    }
    scan = corpus / "ocr_gt" / "tess_phototest.tif"
    try:
        rc, up = _cli(env, "up", "--detach")
        assert rc == 0 and set(up["started"]) == SERVICES
        assert (tmp_path / "home" / "temporal.db").exists()
        rc, out = _cli(env, "submit", str(scan), "--wait")
        assert rc == 0 and out["documents"][0]["state"] == "published"
        sha = out["documents"][0]["sha256"]
        # The stack's witness cosigned the ledger, from a folder outside the object store.
        rc, verified = _cli(env, "verify", sha)
        checks = {c["name"]: c for c in verified["reports"][0]["checks"]}
        assert rc == 0 and checks["ledger.witness"]["ok"], verified
        assert "quorum 1" in checks["ledger.witness"]["detail"]
        assert (tmp_path / "home" / "witness-state" / "witness.key").exists()
        assert not list((tmp_path / "home" / "objects").rglob("witness.key"))
        rc, down = _cli(env, "down")
        assert rc == 0 and set(down["stopped"]) == SERVICES
        rc, up = _cli(env, "up", "--detach")
        assert rc == 0
        helpers = _check_engine_cores(tmp_path / "home" / "run")
        rc, status = _cli(env, "status", sha)
        assert rc == 0 and status["state"] == "published" and status["running"] is False
        rc, rows = _cli(env, "ls")
        assert [r["sha256"] for r in rows] == [sha]
        logs = tmp_path / "home" / "logs"
        assert {p.name for p in logs.iterdir()} >= {
            "worker-io.log",
            "worker-ocr.log",
            "temporal.log",
        }
        rc, _ = _cli(env, "down")
        assert rc == 0
        deadline = time.monotonic() + 15
        while any(Path(f"/proc/{pid}").exists() for pid in helpers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in helpers if Path(f"/proc/{pid}").exists()]  # none left behind
    finally:
        _cli(env, "down")


def _check_engine_cores(run: Path) -> list[int]:
    """The engine's Tesseract helper has its core to itself (custody.cpus, ``auto``)."""
    pids = {p.stem: int(p.read_text()) for p in run.glob("*.pid")}
    assert set(pids) == SERVICES
    helpers = helper_pids(pids["worker-ocr"])
    assert len(helpers) == 1  # started at warm-up, before the first page
    every = os.sched_getaffinity(0)
    plan = cpus.plan("auto", 1, "tesseract")
    if plan is None:  # a one-CPU machine: nothing is pinned
        assert all(os.sched_getaffinity(pid) == every for pid in [*pids.values(), *helpers])
        return helpers
    assert os.sched_getaffinity(helpers[0]) == set(plan.engine)
    for name, pid in pids.items():  # every thread of every service keeps off it
        for task in os.listdir(f"/proc/{pid}/task"):
            assert os.sched_getaffinity(int(task)) == plan.rest, name
    return helpers
