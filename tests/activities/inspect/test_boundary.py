"""The inspection child is a boundary: from inside it, what an exploit would try fails.

A zygote started with ``CUSTODY_INSPECT_PROBE=1`` honours the test-only
``probe`` order (``activities.inspect.probe``): a real forked child, locked down
exactly as for a document, tries to read keys and another document, connect
to a listener this test runs, fork, and read its parents' environments.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import activities.inspect.untrusted as untrusted
from activities.inspect.inspection import ChildOrder
from custody.settings import Limits

PAGE = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "ocr_gt" / "tess_phototest.tif"
ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="file and /proc isolation need root (uid drop)")


def _ask(zygote: untrusted._Zygote, order: ChildOrder) -> dict[str, object]:
    child = zygote.fork(PAGE)
    try:
        out = child.verdict(order.model_dump_json().encode(), 30.0)
        assert os.waitstatus_to_exitcode(child.status()) == 0
    finally:
        child.close()
    reply = json.loads(out or b"{}")
    assert isinstance(reply, dict)
    return reply


def _secret(folder: Path, name: str) -> Path:
    """A file laid out as the keys and staging stores do: 0700 folder, 0600 file."""
    folder.mkdir(mode=0o700)
    path = folder / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"secret")
    os.close(fd)
    return path


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    base = tmp_path_factory.mktemp("boundary")
    key, other = _secret(base / "keys", "tenant.kek"), _secret(base / "staging", "other.pdf")
    listener = socket.create_server(("127.0.0.1", 0))
    zygote = untrusted._Zygote(env={"CUSTODY_INSPECT_PROBE": "1"})
    order = ChildOrder(
        kind="probe",
        limits=Limits(),
        probe_paths=[str(key), str(other), f"/proc/{os.getpid()}/environ"],
        probe_port=listener.getsockname()[1],
    )
    try:
        reply = _ask(zygote, order)
    finally:
        zygote._stop()
        listener.close()
    found = reply["probe"]
    assert isinstance(found, dict)
    yield {"key": key, "other": other, "degraded": reply["degraded"], **found}


def _outcome(probed: dict[str, object], prefix: str) -> object:
    (key,) = [k for k in probed if k.startswith(prefix)]
    return probed[key]


def test_boundary_child_cannot_connect_to_local_listener(probed: dict[str, object]) -> None:
    """A TCP connect to a listener on 127.0.0.1 fails: no network in the child."""
    assert probed["connect"] != "ok"


def test_boundary_child_cannot_fork(probed: dict[str, object]) -> None:
    """``os.fork`` fails in the child (RLIMIT_NPROC 0)."""
    assert probed["fork"] != "ok"


@as_root
def test_boundary_child_cannot_read_keys(probed: dict[str, object]) -> None:
    """A key file (0600 in a 0700 folder) cannot be opened from the child."""
    assert probed[f"open {probed['key']}"] != "ok"


@as_root
def test_boundary_child_cannot_read_other_staging_file(probed: dict[str, object]) -> None:
    """Another document's staging file cannot be opened from the child."""
    assert probed[f"open {probed['other']}"] != "ok"


@as_root
def test_boundary_child_cannot_read_parents_environment(probed: dict[str, object]) -> None:
    """Neither the zygote's nor the worker's ``/proc/PID/environ`` can be read."""
    assert _outcome(probed, "environ ") != "ok"
    assert probed[f"open /proc/{os.getpid()}/environ"] != "ok"


@as_root
def test_boundary_as_root_every_isolation_layer_applies(probed: dict[str, object]) -> None:
    """Run as root, the child gets its namespace, empty root and unprivileged user."""
    degraded = probed["degraded"]
    assert isinstance(degraded, list)
    assert not {"no_netns", "no_chroot", "no_uid_drop"} & set(degraded)


def test_boundary_worker_zygote_refuses_probe_orders() -> None:
    """The worker's own zygote (no probe environment) answers a probe with a refusal."""
    reply = _ask(untrusted._ZYGOTE, ChildOrder(kind="probe", limits=Limits()))
    assert reply.get("error") == "ProbeRefused"
    assert "probe" not in reply
