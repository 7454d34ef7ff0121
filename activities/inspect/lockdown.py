"""Lock a forked inspection child down before it decodes one untrusted byte.

The zygote (``activities.inspect.zygote``) calls ``prepare`` once and each child
calls ``lock_down`` after it has read its order and its document from the
descriptors it was handed, so the child needs no filesystem, no network and no
other process afterwards. Each layer below stands alone; one the platform
refuses is named in the returned list and the others still apply:

    no_netns     no fresh network namespace (not root, user namespaces off)
    no_chroot    not root: the child still sees the filesystem as its user
    no_uid_drop  not root: the child keeps the worker's user
    no_seccomp   libseccomp is not installed: no syscall filter
    no_landlock  the kernel has no Landlock (and ``no_landlock_net``,
                 ``no_landlock_scope`` for an older one: ``activities.inspect.landlock``)

Everywhere, root or not: Landlock (no path can be opened, no TCP, no signal
or abstract socket outside the child), ``PR_SET_NO_NEW_PRIVS``,
``RLIMIT_NPROC`` 0 (no fork, no thread), and the address-space, CPU, core and
file-size limits. Without root, Landlock is what keeps the child, still the
worker's user, out of the worker's files.

``threads=True`` (the ``identify`` order: c2pa's Rust reader builds a thread
pool and aborts without one) lets threads through: ``RLIMIT_NPROC`` is raised
and the syscall filter refuses new processes instead (``fork``, ``vfork``, a
``clone`` without ``CLONE_THREAD``; ``clone3``, whose flags it cannot read,
answers ENOSYS so the C library falls back to ``clone``). Without libseccomp
that leaves fork open, and ``no_seccomp`` says so.

The syscall filter (``activities.inspect.syscalls``) also refuses the signal
family to anyone but the child itself, so on a kernel without Landlock's
signal scope it cannot signal the zygote, the worker or another child.

In production (``CUSTODY_ENV=production``) a missing layer that nothing else
covers (:func:`missing_in_production`) is not a warning: the child decodes
nothing and answers ``SANDBOX_DEGRADED``, and the workers refuse to start.
"""

from __future__ import annotations

import ctypes
import math
import os
import resource
import tempfile

from activities.inspect import landlock, syscalls
from custody.limits import PolicyLimits

NOBODY = 65534
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_THREADS = 64  # RLIMIT_NPROC with threads: a decoder's pool, never a fork bomb
#: Layers whose absence another layer makes up for: the root-only ones (Landlock and
#: the filter hold without them), Landlock's network and signal rules (the filter
#: refuses sockets and signals). What is left must be there in production.
_COVERED = frozenset({"no_netns", "no_chroot", "no_uid_drop", "no_landlock_net"})

_libc = ctypes.CDLL(None, use_errno=True)


def prepare() -> None:
    """In the zygote: no core dump or ptrace of it; load libseccomp while files are reachable."""
    _prctl(_PR_SET_DUMPABLE, 0)
    syscalls.load()


def lock_down(
    limits: PolicyLimits,
    cpu_s: float,
    uid: int = NOBODY,
    gid: int = NOBODY,
    threads: bool = False,
    skip: frozenset[str] = frozenset(),
) -> list[str]:
    """Apply every layer the platform allows; the codes of those it refused.

    ``skip`` (probe zygotes only, ``activities.inspect.probe``): ``"root"`` takes the
    path of a worker without root even as root, ``"seccomp"`` leaves the filter
    off, so a test can show what Landlock holds alone, and ``"landlock"`` leaves
    Landlock off, to show what the filter holds alone.
    """
    degraded: list[str] = []
    root = os.geteuid() == 0 and "root" not in skip
    if "root" in skip or not _new_netns(root):
        degraded.append("no_netns")
    if root:
        _chroot_into_void()
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # last: the steps above need root
    else:
        degraded += ["no_chroot", "no_uid_drop"]
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)  # also what Landlock asks of an unprivileged caller
    degraded += ["no_landlock"] if "landlock" in skip else landlock.restrict()
    # No filter to stop a fork: no threads either (the decoder fails, closed).
    filtered = syscalls.loaded() and "seccomp" not in skip
    _bound(limits, cpu_s, _THREADS if threads and filtered else 0)
    if "seccomp" in skip or not syscalls.install(threads):
        degraded.append("no_seccomp")
    return degraded


def missing_in_production(degraded: list[str]) -> list[str]:
    """The refused layers nothing else covers: any one of them refuses production.

    The filter always; Landlock unless, as root, the empty root and the ``nobody``
    user keep the child out of the worker's files; Landlock's signal scope is
    the filter's signal rules' to cover, and is never missing alone.
    """
    gaps = set(degraded)
    missing = sorted(gaps - _COVERED - {"no_landlock", "no_landlock_scope"})
    if "no_landlock" in gaps and gaps & {"no_chroot", "no_uid_drop"}:
        missing.append("no_landlock")
    if "no_landlock_scope" in gaps and "no_seccomp" in gaps:
        missing.append("no_landlock_scope")
    return missing


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) refused")


def _new_netns(root: bool) -> bool:
    # Without root a user namespace grants the right to make a network namespace.
    flags = _CLONE_NEWNET if root else _CLONE_NEWUSER | _CLONE_NEWNET
    return bool(_libc.unshare(ctypes.c_int(flags)) == 0)


def _chroot_into_void() -> None:
    """Make an empty directory the root, then delete it: nothing can ever appear in it."""
    void = tempfile.mkdtemp(prefix="custody-void-")
    os.chdir(void)
    os.rmdir(void)
    os.chroot(".")
    os.chdir("/")


def _bound(limits: PolicyLimits, cpu_s: float, nproc: int) -> None:
    memory = limits.decode_memory_mb * 1024 * 1024
    cpu = math.ceil(cpu_s) + 1  # SIGXCPU; the wall clock usually fires first
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a core dump would hold the document
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # it has nothing to write
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))  # 0: no fork, no thread
