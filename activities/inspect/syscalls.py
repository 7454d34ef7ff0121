"""The inspection child's syscall filter (libseccomp through ``ctypes``): one layer of
``activities.inspect.lockdown``.

Default-allow, with a denylist of what a decoder never needs and an exploit
usually does: sockets, new programs, reading or joining other processes,
kernel attack surface. Why not an allowlist: pdfium, Pillow, numpy and c2pa's
Rust reader between them make syscalls that vary by library version and libc
(the allocator's, the thread pool's), and a missed one kills a decoder on a
valid document; the denylist is kept to what an escape needs instead, and
Landlock closes the filesystem and network beside it.

Signals: ``kill``, ``tkill``, ``tgkill``, ``rt_sigqueueinfo`` and
``rt_tgsigqueueinfo`` are refused unless their target (the first argument) is
the child's own pid, and ``pidfd_send_signal`` always: still the worker's user
on a kernel before Landlock ABI 6, the child could otherwise signal the
zygote, the worker or another document's child. ``kill(0, ...)`` and
``kill(-1, ...)`` (its process group, everyone) are refused by the same rule.

With ``threads`` (the ``identify`` order) processes are refused here instead of
by ``RLIMIT_NPROC``: ``fork``, ``vfork``, a ``clone`` without ``CLONE_THREAD``,
and ``clone3`` (whose flags it cannot read) answers ENOSYS so the C library
falls back to ``clone``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os

_ALLOW = 0x7FFF0000
_EPERM = 0x00050000 | 1
_ENOSYS = 0x00050000 | 38
_CMP_NE = 1
_CMP_MASKED_EQ = 7
_CLONE_THREAD = 0x00010000
DENIED = (
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
    "pidfd_send_signal",
)
#: Allowed only when their first argument (a pid, tid or tgid) is the child's own.
SIGNALS_TO_SELF = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")

_lib: ctypes.CDLL | None = None


class _ArgCmp(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``: one condition on one syscall argument."""

    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def load() -> None:
    """In the zygote, while files are reachable: libseccomp, if it is installed."""
    global _lib
    name = ctypes.util.find_library("seccomp")
    with contextlib.suppress(OSError):
        _lib = ctypes.CDLL(name or "libseccomp.so.2", use_errno=True)
    if _lib is None:
        return
    _lib.seccomp_init.restype = ctypes.c_void_p
    _lib.seccomp_init.argtypes = [ctypes.c_uint32]
    _lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    _lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    _lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    _lib.seccomp_load.argtypes = [ctypes.c_void_p]
    _lib.seccomp_release.argtypes = [ctypes.c_void_p]


def loaded() -> bool:
    return _lib is not None


def install(threads: bool) -> bool:
    """Load the filter into this process for good; False where there is no libseccomp."""
    if _lib is None:
        return False
    ctx = _lib.seccomp_init(_ALLOW)
    if not ctx:
        return False
    try:
        for name in (*DENIED, "fork", "vfork") if threads else DENIED:
            _deny(ctx, name, _EPERM)
        if threads:
            _deny(ctx, "clone3", _ENOSYS)
            # clone's flags are its first argument on x86-64 and arm64.
            _deny(ctx, "clone", _EPERM, _ArgCmp(0, _CMP_MASKED_EQ, _CLONE_THREAD, 0))
        other = _ArgCmp(0, _CMP_NE, os.getpid(), 0)  # the target is not this process
        for name in SIGNALS_TO_SELF:
            _deny(ctx, name, _EPERM, other)
        return bool(_lib.seccomp_load(ctx) == 0)
    finally:
        _lib.seccomp_release(ctx)


def _deny(ctx: int, name: str, action: int, *conditions: _ArgCmp) -> None:
    number = _lib.seccomp_syscall_resolve_name(name.encode()) if _lib else -1
    if _lib is None or number < 0:  # unknown on this architecture: nothing to deny
        return
    if not conditions:
        _lib.seccomp_rule_add(ctx, action, number, 0)
        return
    array = (_ArgCmp * len(conditions))(*conditions)
    if _lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array) != 0:
        raise OSError("seccomp refused a conditional rule")  # never run without it
