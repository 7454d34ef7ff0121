"""A test-only order: from inside a locked-down child, try what an exploit would try.

Only a zygote started with ``CUSTODY_INSPECT_PROBE=1`` honours it (the worker's
zygote never is), so production never runs it. Each attempt answers ``"ok"`` if
it worked or the name of the exception that stopped it; never a file's content.
The signals are signal 0 (a permission check, nothing delivered) to the zygote,
the child's own process group and, as the one that must work, itself.
``tests/activities/inspect/test_boundary.py`` asserts none of them works.
"""

from __future__ import annotations

import ctypes
import os
import socket
import threading

from activities.inspect.inspection import ChildOrder

PROBE_ENV = "CUSTODY_INSPECT_PROBE"


def probe(order: ChildOrder) -> dict[str, str]:
    """Each attempt's outcome, keyed by what was tried."""
    found = {f"open {path}": _attempt(_read_one, path) for path in order.probe_paths}
    found[f"environ {os.getppid()}"] = _attempt(_read_one, f"/proc/{os.getppid()}/environ")
    found["connect"] = _attempt(_connect, order.probe_port)
    found["fork"] = _attempt(_fork)
    found["thread"] = _attempt(_thread)
    # Signal 0 tests the right to signal without delivering anything.
    found["kill parent"] = _attempt(os.kill, os.getppid(), 0)
    found["kill group"] = _attempt(os.kill, 0, 0)
    found["tgkill parent"] = _attempt(_tgkill, os.getppid())
    found["kill self"] = _attempt(os.kill, os.getpid(), 0)
    return found


def _attempt(action: object, *args: object) -> str:
    try:
        action(*args)  # type: ignore[operator]
    except BaseException as exc:  # noqa: BLE001  (any refusal is an answer)
        return type(exc).__name__
    return "ok"


def _read_one(path: str) -> None:
    with open(path, "rb") as handle:
        handle.read(1)


def _connect(port: int) -> None:
    # No create_connection: its name lookup would fail in the empty root before
    # any connect was tried, which proves nothing about the network.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect(("127.0.0.1", port))


def _tgkill(pid: int) -> None:
    """``tgkill(pid, pid, 0)``, as a thread library would signal another process's thread."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 234, "aarch64": 131}[os.uname().machine]
    if libc.syscall(ctypes.c_long(number), ctypes.c_int(pid), ctypes.c_int(pid), 0) != 0:
        raise OSError(ctypes.get_errno(), "tgkill refused")


def _fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def _thread() -> None:
    worker = threading.Thread(target=lambda: None)
    worker.start()
    worker.join()
