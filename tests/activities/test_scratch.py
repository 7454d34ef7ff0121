"""The staging area: private, verified, and gone on every path."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import BinaryIO

import pytest

from activities.scratch import StagingArea, stored_sha256
from custody.errors import Code, Quarantined
from custody.stores.local import LocalStore

DATA = b"%PDF-1.4 not really, but bytes are bytes\n" * 1000
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "objects")
    store.create("sources/_/doc", DATA)
    return store


def test_staging_copy_is_private_verified_and_deleted(tmp_path: Path, store: LocalStore) -> None:
    """The staged copy is 0600 in 0700 folders, holds the bytes, and is gone after the block."""
    area = StagingArea(tmp_path / "staging")
    with area.staged(store, "sources/_/doc", SHA) as path:
        assert path.read_bytes() == DATA
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(area.root.stat().st_mode) == 0o700
        assert area.files() == [path]
    assert area.files() == []


def test_staging_copy_deleted_when_the_work_fails(tmp_path: Path, store: LocalStore) -> None:
    """An exception inside the block still removes the staged file."""
    area = StagingArea(tmp_path / "staging")
    with pytest.raises(RuntimeError), area.staged(store, "sources/_/doc", SHA):
        raise RuntimeError("OCR crashed")
    assert area.files() == []


def test_staging_hash_mismatch_quarantines_and_leaves_nothing(
    tmp_path: Path, store: LocalStore
) -> None:
    """Bytes that do not hash to the expected SHA-256 raise HASH_MISMATCH; no file stays."""
    area = StagingArea(tmp_path / "staging")
    with pytest.raises(Quarantined) as err, area.staged(store, "sources/_/doc", "0" * 64):
        pytest.fail("the block must not run on a mismatch")
    assert err.value.code is Code.HASH_MISMATCH
    assert area.files() == []


def test_staging_sweep_removes_dead_workers_folders_and_old_files(tmp_path: Path) -> None:
    """A SIGKILLed worker's folder goes at the next sweep; so does any file past the age limit."""
    root = tmp_path / "staging"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = root / f"p{dead.stdout.strip()}-abcd1234"
    orphan.mkdir(parents=True)
    (orphan / "stg-left-behind").write_bytes(b"x")
    live = StagingArea(root)
    live.prepare()
    old = live.own / "stg-old"
    fresh = live.own / "stg-fresh"
    old.write_bytes(b"x")
    fresh.write_bytes(b"x")
    past = time.time() - 7200
    os.utime(old, (past, past))
    assert live.sweep(max_age_s=3600) == 2
    assert not orphan.exists()
    assert live.files() == [fresh]


def test_staging_sweep_tolerates_a_folder_another_worker_swept_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers starting together both sweep a dead worker's folder; neither fails to start."""
    import shutil

    import activities.scratch as scratch

    dead = tmp_path / "staging" / "p999999999-abcd"
    dead.mkdir(parents=True)
    (dead / "custody-leftover").write_bytes(b"x")

    def other_worker_got_there_first(pid: int) -> bool:
        # The injected interleaving: the other worker removes it between our checks.
        shutil.rmtree(dead, ignore_errors=True)
        return False

    monkeypatch.setattr(scratch, "_alive", other_worker_got_there_first)
    assert StagingArea(tmp_path / "staging").sweep(3600) == 0
    assert not dead.exists()


class _RetriedDownload(LocalStore):
    """A stand-in that injects what a retried download does: bytes, then back to 0."""

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        dst.write(b"half of a first attempt")
        dst.seek(0)
        return super().download(key, dst, chunk_size)


def test_stored_sha256_hashes_only_the_attempt_that_finished(tmp_path: Path) -> None:
    """A download that starts again hashes the object once, not the lost attempt too."""
    store = _RetriedDownload(tmp_path / "objects")
    store.create("sources/x", b"the stored bytes")
    assert stored_sha256(store, "sources/x") == hashlib.sha256(b"the stored bytes").hexdigest()
