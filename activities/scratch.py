"""The staging area: private scratch files that nothing downstream trusts.

Every activity that needs a document's bytes gets its own staged copy: a
random name in a 0700 directory, mode 0600, fsynced, its SHA-256 computed while
streaming and checked against the workflow's. The copy is deleted when the
``with`` block ends, on every path.

Cleanup must not depend on a worker finishing normally: a SIGKILL skips every
``finally``. So each worker process stages into its own ``p<pid>-<random>``
folder, and ``sweep`` (at worker start and then on a timer) deletes the folders
of processes that no longer exist, and any staging file older than a limit.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import structlog

from custody.errors import Code, Quarantined
from custody.stores import ObjectStore

log = structlog.get_logger("custody.staging")

_PREFIX = "stg-"


class StagingArea:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.own = root / f"p{os.getpid()}-{os.urandom(4).hex()}"

    def prepare(self) -> None:
        for folder in (self.root, self.own):
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(folder, 0o700)

    @contextmanager
    def staged(self, store: ObjectStore, key: str, expected_sha256: str) -> Iterator[Path]:
        """A verified private copy of ``key``; HASH_MISMATCH quarantines."""
        self.prepare()
        fd, name = _private_file(self.own)
        path = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                digest = _HashingWriter(out)
                store.download(key, digest)  # type: ignore[arg-type]
                out.flush()
                os.fsync(out.fileno())
            if digest.hexdigest() != expected_sha256:
                raise Quarantined(Code.HASH_MISMATCH, f"staged bytes do not hash to {key}")
            yield path
        finally:
            path.unlink(missing_ok=True)

    def new_file(self) -> tuple[int, Path]:
        """A fresh private file in this process's folder, open to write; the caller deletes it."""
        self.prepare()
        fd, name = _private_file(self.own)
        return fd, Path(name)

    def files(self) -> list[Path]:
        """Every staged file of every worker process under this root."""
        if not self.root.exists():
            return []
        return sorted(p for p in self.root.rglob(f"{_PREFIX}*") if p.is_file())

    def sweep(self, max_age_s: float, now: float | None = None) -> int:
        """Delete dead processes' folders and files older than ``max_age_s``; how many files."""
        removed = self._sweep_orphans()
        cutoff = (now if now is not None else time.time()) - max_age_s
        for path in self.files():
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue  # its activity finished meanwhile
        if removed:
            log.info("staging_swept", removed=removed)
        return removed

    def _sweep_orphans(self) -> int:
        removed = 0
        for folder in self.root.glob("p*-*") if self.root.exists() else []:
            pid = folder.name[1:].partition("-")[0]
            if folder.is_dir() and pid.isdigit() and not _alive(int(pid)):
                try:
                    removed += sum(1 for p in folder.iterdir() if p.is_file())
                except FileNotFoundError:
                    continue  # another worker starting at the same moment swept it first
                shutil.rmtree(folder, ignore_errors=True)
        return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _private_file(root: Path) -> tuple[int, str]:
    # O_EXCL with a random name: no other process can have opened it first.
    name = root / f"{_PREFIX}{os.urandom(16).hex()}"
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    return fd, str(name)


class _HashingWriter:
    """A write-only file wrapper that hashes what passes through it."""

    def __init__(self, out: object) -> None:
        self._out = out
        self._sha = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self._sha.update(data)
        return self._out.write(data)  # type: ignore[attr-defined, no-any-return]

    def hexdigest(self) -> str:
        return self._sha.hexdigest()

    # A retried download (custody.stores.patient) starts the copy again: back to
    # the start of the file and of the hash. Only the start can be sought.
    def tell(self) -> int:
        return int(self._out.tell())  # type: ignore[attr-defined]

    def seek(self, offset: int) -> int:
        if offset != 0:
            raise ValueError("a hashing copy can only start again from 0")
        self._sha = hashlib.sha256()
        return int(self._out.seek(0))  # type: ignore[attr-defined]

    def truncate(self) -> int:
        return int(self._out.truncate())  # type: ignore[attr-defined]


def stored_sha256(store: ObjectStore, key: str) -> str:
    """The SHA-256 of a stored object, streamed (never read whole), retries included."""
    digest = _HashingWriter(_Discard())
    store.download(key, digest)  # type: ignore[arg-type]
    return digest.hexdigest()


class _Discard:
    """A sink that keeps only its position, so a retried download can start again."""

    def __init__(self) -> None:
        self._at = 0

    def write(self, data: bytes) -> int:
        self._at += len(data)
        return len(data)

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int) -> int:
        self._at = offset
        return offset

    def truncate(self) -> int:
        return self._at


class Sweeper(threading.Thread):
    """Deletes abandoned staging files on a timer, whatever the workers do."""

    def __init__(self, area: StagingArea, max_age_s: float, interval_s: float) -> None:
        super().__init__(name="staging-sweeper", daemon=True)
        self._area, self._max_age, self._interval = area, max_age_s, interval_s
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self._interval):
            try:
                self._area.sweep(self._max_age)
            except OSError as exc:
                log.warning("staging_sweep_failed", error=type(exc).__name__)

    def stop(self) -> None:
        self._stop_event.set()
