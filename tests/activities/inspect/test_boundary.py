"""The inspection child is a boundary: from inside it, what an exploit would try fails.

A zygote started with ``CUSTODY_INSPECT_PROBE=1`` honours the test-only
``probe`` order (``activities.inspect.probe``): a real forked child, locked down
exactly as for a document, tries to read keys and another document, connect
to a listener this test runs, fork, and read its parents' environments.
Run as root (as CI does) every probe runs; otherwise those that rest on root
skip and say so, and the fork and refusal checks still run.

The same probes run again on the path of a worker without root (as in
``deploy/k8s``): the order's ``probe_skip`` makes the child leave out the
root-only layers, even as root, and, in a second run, the syscall filter too,
so what still stops them there is Landlock alone. As root that child even
keeps root's capabilities: only Landlock can refuse it a file.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import activities.inspect.untrusted as untrusted
from activities.inspect import landlock, lockdown
from activities.inspect.inspection import ChildOrder
from activities.inspect.layers import check_sandbox
from custody.errors import Code, ConfigurationError
from custody.settings import Limits

PAGE = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "ocr_gt" / "tess_phototest.tif"
ROOT = os.geteuid() == 0
# CI runs as root, so these run there. Without root the child keeps the worker's
# user and, where user namespaces are off, its network: nothing to prove.
as_root = pytest.mark.skipif(
    not ROOT,
    reason="needs root: the child's uid drop, empty root and network namespace are root-only",
)
needs_landlock = pytest.mark.skipif(
    landlock.abi() < 4, reason="needs Landlock ABI 4 (Linux 6.7) for its network rules"
)
ROOT_LAYERS = {"no_netns", "no_chroot", "no_uid_drop"}


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


def _probe(base: Path, skip: list[str]) -> dict[str, object]:
    """Every probe from one child locked down without the ``skip`` layers."""
    key, other = _secret(base / "keys", "tenant.kek"), _secret(base / "staging", "other.pdf")
    listener = socket.create_server(("127.0.0.1", 0))
    zygote = untrusted._Zygote(env={"CUSTODY_INSPECT_PROBE": "1"})
    order = ChildOrder.model_validate(
        {
            "kind": "probe",
            "limits": Limits(),
            "probe_paths": [str(key), str(other), f"/proc/{os.getpid()}/environ"],
            "probe_port": listener.getsockname()[1],
            "probe_skip": skip,
        }
    )
    try:
        reply = _ask(zygote, order)
    finally:
        zygote._stop()
        listener.close()
    found = reply["probe"]
    assert isinstance(found, dict)
    return {"key": key, "other": other, "degraded": reply["degraded"], **found}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return _probe(tmp_path_factory.mktemp("boundary"), [])


@pytest.fixture(
    scope="module", params=[["root"], ["root", "seccomp"]], ids=["unprivileged", "landlock-only"]
)
def unprivileged(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, object]]:
    """The probes from a child on the non-root path (and, second, without seccomp too)."""
    yield _probe(tmp_path_factory.mktemp("unprivileged"), request.param)


def _outcome(probed: dict[str, object], prefix: str) -> object:
    (key,) = [k for k in probed if k.startswith(prefix)]
    return probed[key]


@as_root
def test_boundary_child_cannot_connect_to_local_listener(probed: dict[str, object]) -> None:
    """A TCP connect to a listener on 127.0.0.1 fails: no network in the child."""
    assert probed["connect"] != "ok"


def test_boundary_child_cannot_fork(probed: dict[str, object]) -> None:
    """``os.fork`` fails in the child (RLIMIT_NPROC 0)."""
    assert probed["fork"] != "ok"


def test_boundary_child_cannot_start_a_thread(probed: dict[str, object]) -> None:
    """A document's child cannot start a thread either (RLIMIT_NPROC 0)."""
    assert probed["thread"] != "ok"


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
    assert not ROOT_LAYERS & set(degraded)
    assert not {code for code in degraded if code.startswith("no_landlock")}


@needs_landlock
def test_boundary_unprivileged_child_lacks_only_the_root_layers(
    unprivileged: dict[str, object],
) -> None:
    """On the non-root path the root-only layers are named as missing and Landlock is not."""
    degraded = unprivileged["degraded"]
    assert isinstance(degraded, list)
    assert set(degraded) >= ROOT_LAYERS
    assert not {code for code in degraded if code.startswith("no_landlock")}


@needs_landlock
def test_boundary_unprivileged_child_cannot_read_keys(unprivileged: dict[str, object]) -> None:
    """Without root's layers a key file the child's own user may read is still refused."""
    assert unprivileged[f"open {unprivileged['key']}"] == "PermissionError"


@needs_landlock
def test_boundary_unprivileged_child_cannot_read_other_staging_file(
    unprivileged: dict[str, object],
) -> None:
    """Without root's layers another document's staging file is still refused."""
    assert unprivileged[f"open {unprivileged['other']}"] == "PermissionError"


@needs_landlock
def test_boundary_unprivileged_child_cannot_read_parents_environment(
    unprivileged: dict[str, object],
) -> None:
    """Without root's layers neither parent's ``/proc/PID/environ`` can be read."""
    assert _outcome(unprivileged, "environ ") == "PermissionError"
    assert unprivileged[f"open /proc/{os.getpid()}/environ"] == "PermissionError"


@needs_landlock
def test_boundary_unprivileged_child_cannot_connect_to_local_listener(
    unprivileged: dict[str, object],
) -> None:
    """Without a network namespace a TCP connect to 127.0.0.1 is still refused."""
    assert unprivileged["connect"] == "PermissionError"


def test_boundary_worker_zygote_refuses_probe_orders() -> None:
    """The worker's own zygote (no probe environment) answers a probe with a refusal."""
    reply = _ask(untrusted._ZYGOTE, ChildOrder(kind="probe", limits=Limits()))
    assert reply.get("error") == "ProbeRefused"
    assert "probe" not in reply


def test_boundary_threaded_child_may_thread_but_never_fork(tmp_path: Path) -> None:
    """Locked down as for ``identify`` (c2pa needs a thread), a child still cannot fork."""
    key = _secret(tmp_path / "keys", "tenant.kek")
    zygote = untrusted._Zygote(env={"CUSTODY_INSPECT_PROBE": "1"})
    order = ChildOrder(kind="probe", limits=Limits(), probe_paths=[str(key)], probe_threads=True)
    try:
        reply = _ask(zygote, order)
    finally:
        zygote._stop()
    found, degraded = reply["probe"], reply["degraded"]
    assert isinstance(found, dict) and isinstance(degraded, list)
    assert found["fork"] != "ok"
    # Threads only behind the syscall filter that refuses new processes.
    assert found["thread"] == ("ok" if "no_seccomp" not in degraded else "RuntimeError")
    if ROOT:
        assert found[f"open {key}"] != "ok"


# --- signals, and production's refusal of a missing layer ---------------------------


@pytest.fixture(scope="module", params=[[], ["root", "landlock"]], ids=["all", "filter-only"])
def signalled(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, object]:
    """The probes from a fully locked-down child, and from one the syscall filter alone holds
    (no Landlock, no root layers: still the zygote's user, as on a kernel before ABI 6)."""
    return _probe(tmp_path_factory.mktemp("signals"), request.param)


def test_boundary_child_cannot_signal_its_parent_or_group(signalled: dict[str, object]) -> None:
    """kill and tgkill to the zygote, and kill(0) to the group, are refused; itself, not."""
    for attempt in ("kill parent", "kill group", "tgkill parent"):
        assert signalled[attempt] in ("PermissionError", "OSError"), attempt
    assert signalled["kill self"] == "ok"


def test_boundary_without_filter_or_landlock_the_signal_probe_gets_through(tmp_path: Path) -> None:
    """The same probe with every such layer off signals the zygote: the probe can fail."""
    found = _probe(tmp_path, ["root", "landlock", "seccomp"])
    assert found["kill parent"] == "ok"


@pytest.mark.parametrize(
    ("degraded", "missing"),
    [
        ([], []),
        (["no_netns", "no_chroot", "no_uid_drop"], []),  # the k8s path: Landlock and filter hold
        (["no_landlock_scope"], []),  # the filter refuses signals
        (["no_landlock_net", "no_netns"], []),  # the filter refuses sockets
        (["no_seccomp"], ["no_seccomp"]),
        (["no_landlock"], []),  # as root: empty root and nobody keep the files out
        (["no_landlock", "no_chroot", "no_uid_drop"], ["no_landlock"]),
        (["no_landlock_scope", "no_seccomp"], ["no_seccomp", "no_landlock_scope"]),
    ],
)
def test_boundary_missing_in_production_names_uncovered_layers(
    degraded: list[str], missing: list[str]
) -> None:
    """Only a layer no other layer makes up for counts as missing in production."""
    assert lockdown.missing_in_production(degraded) == missing


def _production_zygote() -> untrusted._Zygote:
    return untrusted._Zygote(env={"CUSTODY_INSPECT_PROBE": "1", "CUSTODY_ENV": "production"})


def test_boundary_production_child_without_its_filter_decodes_nothing() -> None:
    """Production, a zygote told to leave the filter off: the child answers SANDBOX_DEGRADED
    instead of a verdict, and the worker's side raises it as a configuration error."""
    zygote = _production_zygote()
    order = ChildOrder.model_validate(
        {"kind": "inspect", "limits": Limits(), "probe_skip": ["seccomp"]}
    )
    try:
        reply = _ask(zygote, order)
    finally:
        zygote._stop()
    assert reply.get("code") == "SANDBOX_DEGRADED" and "ok" not in reply
    with pytest.raises(ConfigurationError) as info:
        untrusted.child_reply(0, json.dumps(reply).encode())
    assert info.value.code == Code.SANDBOX_DEGRADED


def test_boundary_production_worker_start_refuses_a_missing_layer() -> None:
    """The workers' start-up check: a missing filter is refused in production only;
    this platform's full sandbox passes it."""
    zygote = _production_zygote()
    try:
        with pytest.raises(ConfigurationError) as info:
            check_sandbox(True, zygote, skip=("seccomp",))
        assert check_sandbox(False, zygote, skip=("seccomp",)) == ["no_seccomp"] or not ROOT
    finally:
        zygote._stop()
    assert info.value.code == Code.SANDBOX_DEGRADED
    assert lockdown.missing_in_production(check_sandbox(True)) == []
