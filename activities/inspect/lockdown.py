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
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import math
import os
import resource
import tempfile

from activities.inspect import landlock
from custody.limits import PolicyLimits

NOBODY = 65534
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO_EPERM = 0x00050000 | 1
_SCMP_ACT_ERRNO_ENOSYS = 0x00050000 | 38
_SCMP_CMP_MASKED_EQ = 7
_CLONE_THREAD = 0x00010000
_THREADS = 64  # RLIMIT_NPROC with threads: a decoder's pool, never a fork bomb
# What a decoder never needs and an exploit usually does: sockets, new
# programs, reading or joining other processes, kernel attack surface. Fork and
# threads are left to RLIMIT_NPROC, which denies them without a syscall list.
_DENIED = (
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_open",
    "pidfd_getfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "kexec_load",
    "init_module",
    "finit_module",
)

_libc = ctypes.CDLL(None, use_errno=True)
_seccomp: ctypes.CDLL | None = None


class _ArgCmp(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``: one condition on one syscall argument."""

    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def prepare() -> None:
    """In the zygote: no core dump or ptrace of it; load libseccomp while files are reachable."""
    global _seccomp
    _prctl(_PR_SET_DUMPABLE, 0)
    name = ctypes.util.find_library("seccomp")
    with contextlib.suppress(OSError):
        _seccomp = ctypes.CDLL(name or "libseccomp.so.2", use_errno=True)
    if _seccomp is not None:
        _seccomp.seccomp_init.restype = ctypes.c_void_p
        _seccomp.seccomp_init.argtypes = [ctypes.c_uint32]
        _seccomp.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        _seccomp.seccomp_rule_add.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_int,
            ctypes.c_uint,
        ]
        _seccomp.seccomp_rule_add_array.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.POINTER(_ArgCmp),
        ]
        _seccomp.seccomp_load.argtypes = [ctypes.c_void_p]
        _seccomp.seccomp_release.argtypes = [ctypes.c_void_p]


def lock_down(
    limits: PolicyLimits,
    cpu_s: float,
    uid: int = NOBODY,
    gid: int = NOBODY,
    threads: bool = False,
    skip: frozenset[str] = frozenset(),
) -> list[str]:
    """Apply every layer the platform allows; the codes of those it refused.

    ``skip`` (probe orders only, ``activities.inspect.probe``): ``"root"`` takes the
    path of a worker without root even as root, ``"seccomp"`` leaves the filter
    off, so a test can show what Landlock holds alone.
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
    degraded += landlock.restrict()
    # No filter to stop a fork: no threads either (the decoder fails, closed).
    filtered = _seccomp is not None and "seccomp" not in skip
    _bound(limits, cpu_s, _THREADS if threads and filtered else 0)
    if "seccomp" in skip or not _filter_syscalls(threads):
        degraded.append("no_seccomp")
    return degraded


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


def _filter_syscalls(threads: bool) -> bool:
    if _seccomp is None:
        return False
    ctx = _seccomp.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        return False
    try:
        denied = (*_DENIED, "fork", "vfork") if threads else _DENIED
        for name in denied:
            _deny(ctx, name, _SCMP_ACT_ERRNO_EPERM)
        if threads:
            _deny(ctx, "clone3", _SCMP_ACT_ERRNO_ENOSYS)
            # clone's flags are its first argument on x86-64 and arm64.
            process = _ArgCmp(0, _SCMP_CMP_MASKED_EQ, _CLONE_THREAD, 0)
            _deny(ctx, "clone", _SCMP_ACT_ERRNO_EPERM, process)
        return bool(_seccomp.seccomp_load(ctx) == 0)
    finally:
        _seccomp.seccomp_release(ctx)


def _deny(ctx: int, name: str, action: int, *conditions: _ArgCmp) -> None:
    number = _seccomp.seccomp_syscall_resolve_name(name.encode()) if _seccomp else -1
    if _seccomp is None or number < 0:  # unknown on this architecture: nothing to deny
        return
    if not conditions:
        _seccomp.seccomp_rule_add(ctx, action, number, 0)
        return
    array = (_ArgCmp * len(conditions))(*conditions)
    if _seccomp.seccomp_rule_add_array(ctx, action, number, len(conditions), array) != 0:
        raise OSError("seccomp refused the process rule")  # never run threads without it
