"""The keyring's folder: key files written 0600 and complete before they have a name.

Everything here touches the filesystem and nothing else; ``custody.keys``
builds the :class:`~custody.keys.Keyring` from it. File names are listed in
``custody.keys``' docstring.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path

from custody.errors import Code, ConfigurationError

KEY_BYTES = 32
_SCOPE = re.compile(r"^[A-Za-z0-9_-]{1,63}$")


def new_kid() -> str:
    """Sortable by creation time, so the greatest ID is the newest key."""
    return f"k{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}"


def kek_path(directory: Path, scope: str, version: int) -> Path:
    return directory / (f"kek-{scope}.key" if version == 0 else f"kek-{scope}.{version}.key")


def version_of(name: str) -> int:
    """``scope`` -> 0, ``scope.N`` -> N (file stems and JSON secret names alike)."""
    _, _, version = name.partition(".")
    return int(version) if version.isdigit() else 0


def fresh_key() -> bytes:
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)) + b"\n"


def rotate(directory: Path) -> str:
    """Add a new payload key; new payloads use it, older ones still decrypt."""
    kid = new_kid()
    key = base64.b64encode(secrets.token_bytes(KEY_BYTES)) + b"\n"
    write_secret(directory / f"payload-{kid}.key", key)
    return kid


def shred(directory: Path, scope: str) -> None:
    """Destroy every KEK version of a tenant; the tombstone comes first so nothing recreates one."""
    check_scope(scope)
    stone = directory / f"kek-{scope}.shredded"
    with contextlib.suppress(FileExistsError):
        write_secret(stone, json.dumps({"shredded_at": datetime.now(UTC).isoformat()}).encode())
    for path in [*directory.glob(f"kek-{scope}.key"), *directory.glob(f"kek-{scope}.*.key")]:
        with contextlib.suppress(FileNotFoundError), path.open("r+b") as f:
            # Overwrite before unlinking, so the bytes are not left in a free block.
            f.write(b"\0" * len(f.read()))
            f.flush()
            os.fsync(f.fileno())
        path.unlink(missing_ok=True)


def read_payload_keys(directory: Path) -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    paths = list(directory.glob("payload-*.key"))
    for path in paths:
        _check_private(path)
    return {p.name[len("payload-") : -len(".key")]: b64key(p.read_bytes()) for p in paths}


def _check_private(path: Path) -> None:
    """A key file group or others can read is refused, not silently used: KEY_PERMISSIONS."""
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        raise ConfigurationError(
            Code.KEY_PERMISSIONS, f"{path.name} is readable beyond its owner (need 0600)"
        )


def b64key(raw: bytes) -> bytes:
    key = base64.b64decode(raw.strip(), validate=True)
    if len(key) != KEY_BYTES:
        raise ConfigurationError(detail="a key is not 32 bytes (AES-256)")
    return key


def check_scope(scope: str) -> None:
    if not _SCOPE.match(scope):
        raise ConfigurationError(detail="tenant scope must match [A-Za-z0-9_-]{1,63}")


def private_dir(directory: Path) -> None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask


def write_secret(path: Path, data: bytes) -> None:
    """Mode 0600, complete before it has a name (link), never overwriting: FileExistsError."""
    tmp = path.with_name(f".tmp-{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
