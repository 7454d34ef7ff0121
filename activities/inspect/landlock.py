"""Landlock: the inspection child's filesystem and network, closed without root.

Root gives the child an empty root directory, its own network namespace and
the ``nobody`` user (``activities.inspect.lockdown``); a worker run as in
``deploy/k8s`` (non-root, every capability dropped) gets none of them. Landlock
is the kernel's sandbox for an unprivileged process to restrict itself, so the
child applies it either way: a ruleset that handles every filesystem right the
kernel knows and grants none, so no path can be opened, listed, created or
executed, whoever owns it (the worker's ``keys/``, another document's staging
file, ``/proc/PID/environ``). Descriptors opened before (its pipes, its
document) keep working: the decoders are preloaded and the bytes already read,
so the child needs no path at all (as root it runs in an empty root already).

By ABI: 1 the filesystem; 2 ``REFER``, 3 ``TRUNCATE``, 5 ``IOCTL_DEV`` added;
4 TCP bind and connect, handled with no rule, so no TCP; 6 scopes, so no
connect to an abstract unix socket and no signal outside the child's domain.
What the kernel lacks is named in the returned codes:

    no_landlock        no Landlock at all (kernel before 5.13, or not enabled)
    no_landlock_net    ABI < 4: TCP left to the network namespace and seccomp
    no_landlock_scope  ABI < 6: abstract sockets and signals left to seccomp
"""

from __future__ import annotations

import ctypes
import os
import struct

# The same numbers on every architecture (the unified syscall table since 5.13).
_CREATE_RULESET = 444
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_CONNECT_BIND_TCP = 0b11  # LANDLOCK_ACCESS_NET_BIND_TCP | _CONNECT_TCP
_SCOPE_UNIX_SIGNAL = 0b11  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | _SIGNAL

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi() -> int:
    """The kernel's Landlock ABI version; 0 without Landlock."""
    version = _libc.syscall(
        ctypes.c_long(_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def restrict() -> list[str]:
    """Deny this process every path and TCP port it has not already opened; the codes of
    what this kernel cannot deny. Needs ``PR_SET_NO_NEW_PRIVS`` (or root) first."""
    version = abi()
    if version == 0:
        return ["no_landlock"]
    attr = _ruleset_attr(version)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _libc.syscall(
        ctypes.c_long(_CREATE_RULESET), buffer, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset refused")
    try:
        # A kernel that has Landlock and then refuses it fails the child, closed.
        if _libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), "landlock_restrict_self refused")
    finally:
        os.close(ruleset)
    return [code for floor, code in _GAPS if version < floor]


_GAPS = ((4, "no_landlock_net"), (6, "no_landlock_scope"))


def _ruleset_attr(version: int) -> bytes:
    """``struct landlock_ruleset_attr`` as long as this ABI knows it: a longer one is refused."""
    fs = _FS_BY_ABI[max(v for v in _FS_BY_ABI if v <= version)]
    if version < 4:
        return struct.pack("=Q", fs)
    if version < 6:
        return struct.pack("=QQ", fs, _NET_CONNECT_BIND_TCP)
    return struct.pack("=QQQ", fs, _NET_CONNECT_BIND_TCP, _SCOPE_UNIX_SIGNAL)
