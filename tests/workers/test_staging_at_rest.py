"""Production refuses a staging folder that would put plaintext documents on an ordinary disk."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from custody.errors import ConfigurationError
from custody.settings import Settings
from workers.common import check_staging_at_rest

# The CI machine and this one have /dev/shm as tmpfs; the repository's disk is not.
SHM = Path("/dev/shm")


def test_staging_on_disk_is_refused_in_production(tmp_path: Path) -> None:
    """On an ordinary filesystem, production fails fast with what to do; development allows it."""
    # A written mount table (the stand-in): where pytest's tmp_path lives varies by machine.
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/vda / ext4 rw 0 0\n")
    staging = tmp_path / "staging"
    with pytest.raises(ConfigurationError, match="not tmpfs"):
        check_staging_at_rest(
            Settings(home=tmp_path, staging_dir=staging, env="production"), mounts
        )
    assert check_staging_at_rest(Settings(home=tmp_path, staging_dir=staging), mounts) == "ext4"


def test_staging_declared_encrypted_volume_is_accepted(tmp_path: Path) -> None:
    """The operator's declaration that the volume is encrypted at rest lets production start."""
    settings = Settings(
        home=tmp_path, staging_dir=tmp_path, env="production", staging_encrypted_volume=True
    )
    check_staging_at_rest(settings)


def test_staging_on_tmpfs_is_accepted_in_production(tmp_path: Path) -> None:
    """A tmpfs staging folder (RAM, gone on reboot) needs no declaration."""
    with tempfile.TemporaryDirectory(dir=SHM) as ram:
        settings = Settings(home=tmp_path, staging_dir=Path(ram), env="production")
        assert check_staging_at_rest(settings) == "tmpfs"


def test_staging_filesystem_is_the_longest_mount_above_it(tmp_path: Path) -> None:
    """A tmpfs mounted inside a disk folder counts as tmpfs; its parent does not."""
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/vda / ext4 rw 0 0\ntmpfs {tmp_path}/ram tmpfs rw 0 0\n")
    ram = Settings(home=tmp_path, staging_dir=tmp_path / "ram" / "staging", env="production")
    assert check_staging_at_rest(ram, mounts) == "tmpfs"
    disk = Settings(home=tmp_path, staging_dir=tmp_path / "disk", env="production")
    with pytest.raises(ConfigurationError):
        check_staging_at_rest(disk, mounts)
