"""A directory as an object store: the embedded default.

Each key is a file under ``root``. Writes go to a private temp file in the
destination directory, are fsynced, then published in one step:

* :meth:`LocalStore.create` publishes with ``os.link``, which fails if the name
  is taken. That makes create-if-absent atomic across threads *and* processes,
  and the published file is always complete (it was whole before it had a name).
* :meth:`LocalStore.put` publishes with ``os.replace`` (last writer wins).

Errors such as ``ENOSPC`` propagate as ``OSError``; callers map them to codes.

A write costs what durability needs and no more: the folders a store has made
are remembered (made again if one vanished), and bytes go to the temp file with
``os.write``, not through a buffered file object (no seek, no tty probe). The
audit ledger creates a file or two per event, so these syscalls are its speed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from custody.stores.base import ObjectMissing, check_key

CHUNK = 1 << 20
# Keys never contain "~" (custody.ids builds them from [A-Za-z0-9._-]) and
# _path refuses this marker, so a temp file can never be mistaken for a key.
_TMP_MARK = ".custody-tmp~"
# A missing object can also look like "a directory where a file was expected"
# (``get("a")`` when only ``a/b`` exists) or the reverse.
_ABSENT = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


class LocalStore:
    """Objects as files under ``root`` (mode 0700), each file mode 0600."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._folders: set[str] = set()  # folders known to exist (a cache; refilled on a miss)
        if not self.root.is_dir():
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            # mkdir's mode is filtered by the umask; set it exactly.
            os.chmod(self.root, 0o700)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def create(self, key: str, data: bytes) -> bool:
        """Store ``data`` at ``key`` only if absent. True if created, False if it existed."""
        return self._create(key, lambda fd: _write_all(fd, data))

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        """Like :meth:`create`, copying ``src`` in chunks."""
        return self._create(key, lambda fd: _copy_into(fd, src))

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` at ``key``, replacing what is there."""
        final = os.fspath(self._path(key))
        folder = os.path.dirname(final)
        tmp = self._write_temp(folder, lambda fd: _write_all(fd, data))
        try:
            os.replace(tmp, final)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        _fsync_dir(folder)

    def get(self, key: str) -> bytes:
        """The object's bytes; :class:`ObjectMissing` if absent."""
        try:  # unbuffered: one read of the whole file, no tty probe
            with open(self._path(key), "rb", buffering=0) as f:
                return f.readall()
        except _ABSENT:
            raise ObjectMissing(key) from None

    def download(self, key: str, dst: BinaryIO, chunk_size: int = CHUNK) -> int:
        """Stream the object into ``dst`` in chunks; returns the byte count."""
        try:
            src = self._path(key).open("rb")
        except _ABSENT:
            raise ObjectMissing(key) from None
        count = 0
        with src:
            while chunk := src.read(chunk_size):
                dst.write(chunk)
                count += len(chunk)
        return count

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def size(self, key: str) -> int:
        """Byte length; :class:`ObjectMissing` if absent."""
        try:
            st = self._path(key).stat()
        except _ABSENT:
            raise ObjectMissing(key) from None
        if not stat.S_ISREG(st.st_mode):
            raise ObjectMissing(key)
        return st.st_size

    def delete(self, key: str) -> None:
        """Remove ``key``; absent is not an error."""
        try:
            self._path(key).unlink()
        except _ABSENT:
            return

    def list(self, prefix: str) -> Iterator[str]:
        """Keys starting with ``prefix`` (a string prefix, not only a folder), in lexical order."""
        base = prefix.rpartition("/")[0]
        top = self._path(base) if base else self.root
        # A walk yields a folder's keys together, but key order can interleave
        # them ("a.b" < "a/x" as "." < "/"), so gather the matches and sort.
        return iter(sorted(k for k in self._walk(top) if k.startswith(prefix)))

    def _walk(self, top: Path) -> Iterator[str]:
        for dirpath, _dirs, files in os.walk(top):
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in files:
                if not name.startswith(_TMP_MARK):
                    yield name if rel == "." else f"{rel}/{name}"

    def _path(self, key: str) -> Path:
        check_key(key)
        if any(part.startswith(_TMP_MARK) for part in key.split("/")):
            raise ValueError(f"invalid object key {key!r}")
        return self.root / key

    def _makedirs(self, folder: str) -> None:
        """``folder`` and those above it, each 0700 (not ``Path.mkdir(parents=True)``: that
        gives intermediate folders the default mode); folders made before are skipped."""
        if folder in self._folders:
            return
        try:  # usually only the last one is new (a document's index folder, say)
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            current = os.fspath(self.root)
            for part in Path(folder).relative_to(self.root).parts:
                current = os.path.join(current, part)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(current, 0o700)
        self._folders.add(folder)

    def _create(self, key: str, fill: Callable[[int], object]) -> bool:
        final = os.fspath(self._path(key))
        if os.path.exists(final):
            # Cheap early answer; the link below is what decides a race.
            return False
        folder = os.path.dirname(final)
        tmp = self._write_temp(folder, fill)
        try:
            os.link(tmp, final)
        except FileExistsError:
            return False
        finally:
            _unlink_quietly(tmp)
        _fsync_dir(folder)
        return True

    def _write_temp(self, folder: str, fill: Callable[[int], object]) -> str:
        """A complete, fsynced, mode-0600 file with a random name in ``folder`` (made if
        missing: a folder remembered as made may have been removed since)."""
        tmp = os.path.join(folder, f"{_TMP_MARK}{secrets.token_hex(12)}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        self._makedirs(folder)
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileNotFoundError:
            self._folders.discard(folder)
            self._makedirs(folder)
            fd = os.open(tmp, flags, 0o600)
        try:
            fill(fd)
            os.fsync(fd)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        finally:
            os.close(fd)
        return tmp


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_into(fd: int, src: BinaryIO) -> None:
    while chunk := src.read(CHUNK):
        _write_all(fd, chunk)


def _fsync_dir(directory: str) -> None:
    """Make a new directory entry durable, not only the file's bytes."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
