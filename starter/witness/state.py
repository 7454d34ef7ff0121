"""A witness's own state and key, in a directory of its own: what ``add-checkpoint`` decides on.

    <dir>/witness.key       the Ed25519 seed (0600), made on first start; never leaves
    <dir>/witness.json      its name (``custody-witness/<key id>`` unless given)
    <dir>/witness.vkey      its cosigner vkey, for verifiers to pin (CUSTODY_WITNESS_KEYS)
    <dir>/logs              the logs it witnesses: ``<origin or prefix*> <log vkey>`` a line
    <dir>/origins/<h>.json  per origin, the size and root it last cosigned

The directory belongs to the witness, never to the object store it watches,
nor to the workers: they hold the log's signing key, and a witness they could
rewrite would witness nothing. Checking a checkpoint and recording its size
happen under one lock (a thread lock and ``flock`` on ``<dir>/lock``), and the
record is written atomically before the cosignature is returned, so two
racing submissions cannot both be cosigned from the same old size (C2SP
tlog-witness, "the rollback race").
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from custody.ledger import tlog
from custody.ledger.cosign import NOTE_KEY, body_of, cosign, parse_vkey, vkey
from custody.ledger.signing import key_id
from custody.settings import Settings

DEFAULT_ORIGINS = "custody.ledger/*"


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, body, content type."""

    status: int
    body: bytes
    kind: str = "text/plain; charset=utf-8"


class WitnessState:
    def __init__(self, directory: Path, name: str | None = None) -> None:
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        (directory / "origins").mkdir(exist_ok=True, mode=0o700)
        self._private = _key(directory / "witness.key")
        self.public = self._private.public_key()
        self.name = _name(
            directory / "witness.json", name or f"custody-witness/{key_id(self.public)}"
        )
        self.vkey = vkey(self.name, self.public)
        (directory / "witness.vkey").write_text(self.vkey + "\n")
        self._lock = threading.Lock()

    def trust(self, log_vkey: str, origins: str = DEFAULT_ORIGINS) -> None:
        """Witness the logs matching ``origins`` signed by ``log_vkey`` (kept, once)."""
        name, kind, _ = parse_vkey(log_vkey)
        if kind != NOTE_KEY:
            raise ValueError(f"{name} is not a log's note key")
        line = f"{origins} {log_vkey.strip()}"
        path = self.dir / "logs"
        known = path.read_text().splitlines() if path.exists() else []
        if line not in known:
            path.write_text("\n".join([*known, line]) + "\n")

    def log_keys(self, origin: str) -> dict[str, Ed25519PublicKey] | None:
        """The keys trusted to sign ``origin``; None when this witness does not know it."""
        path, found = self.dir / "logs", None
        for line in path.read_text().splitlines() if path.exists() else []:
            pattern, _, text = line.partition(" ")
            if pattern == origin or (pattern.endswith("*") and origin.startswith(pattern[:-1])):
                name, _, key = parse_vkey(text)
                found = {**(found or {}), name: key}
        return found

    def add_checkpoint(self, request: bytes) -> Answer:
        """C2SP tlog-witness ``add-checkpoint``: 200 with the cosignature, or why not."""
        try:
            old, proof, signed = _parse(request)
            body = body_of(signed)
            origin = body.split(b"\n")[0].decode()
            size, root = _size_root(body)
        except (ValueError, UnicodeDecodeError, IndexError):
            return Answer(400, b"malformed request\n")
        keys = self.log_keys(origin)
        if keys is None:
            return Answer(404, b"unknown log\n")
        if tlog.open_note(signed, keys) is None:
            return Answer(403, b"no trusted signature\n")
        if old > size:
            return Answer(400, b"old size beyond the checkpoint\n")
        with self._lock, _flock(self.dir / "lock"):
            return self._decide(origin, old, proof, body, size, root)

    def _decide(
        self, origin: str, old: int, proof: list[bytes], body: bytes, size: int, root: bytes
    ) -> Answer:
        held_size, held_root = self._held(origin)
        if old != held_size:
            return Answer(409, b"%d\n" % held_size, "text/x.tlog.size")
        if old == size and root != held_root:
            return Answer(409, b"%d\n" % held_size, "text/x.tlog.size")
        if not tlog.verify_consistency(old, size, held_root, root, proof):
            return Answer(422, b"consistency proof does not verify\n")
        self._hold(origin, size, root)
        return Answer(200, cosign(body, self.name, self._private, int(time.time())))

    def _path(self, origin: str) -> Path:
        return self.dir / "origins" / f"{hashlib.sha256(origin.encode()).hexdigest()}.json"

    def _held(self, origin: str) -> tuple[int, bytes]:
        try:
            held = json.loads(self._path(origin).read_text())
            return int(held["size"]), base64.b64decode(held["root"])
        except FileNotFoundError:
            return 0, b""

    def _hold(self, origin: str, size: int, root: bytes) -> None:
        """Record the new size, durably, before anything is cosigned."""
        path = self._path(origin)
        body = {"origin": origin, "size": size, "root": base64.b64encode(root).decode()}
        tmp = path.with_suffix(".tmp")
        with tmp.open("w") as out:
            out.write(json.dumps(body))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _parse(request: bytes) -> tuple[int, list[bytes], bytes]:
    """(old size, consistency proof, signed note) of an ``add-checkpoint`` body."""
    head, _, rest = request.partition(b"\n")
    word, _, number = head.decode().partition(" ")
    if word != "old" or not number.isdigit() or (number != "0" and number.startswith("0")):
        raise ValueError("no old size")
    proof: list[bytes] = []
    while not rest.startswith(b"\n"):
        line, sep, rest = rest.partition(b"\n")
        if not sep or len(proof) == 63:
            raise ValueError("proof unterminated")
        proof.append(base64.b64decode(line, validate=True))
    return int(number), proof, rest[1:]


def _size_root(body: bytes) -> tuple[int, bytes]:
    lines = body.decode().split("\n")
    size, root = lines[1], base64.b64decode(lines[2], validate=True)
    if not size.isdigit() or (size != "0" and size.startswith("0")) or len(root) != 32:
        raise ValueError("not a checkpoint")
    return int(size), root


def _key(path: Path) -> Ed25519PrivateKey:
    if not path.exists():
        seed = Ed25519PrivateKey.generate().private_bytes_raw()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(base64.b64encode(seed))
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(path.read_bytes()))


def _name(path: Path, default: str) -> str:
    if not path.exists():
        path.write_text(json.dumps({"name": default}))
    return str(json.loads(path.read_text())["name"])


class _flock:
    """``flock`` on a file for a ``with``: one decision at a time, across processes too."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def trust_local_log(settings: Settings, directory: Path) -> None:
    """Have the witness in ``directory`` trust this machine's signing key (``custody up``;
    a development key is made here if there is none yet)."""
    from custody.ledger.checkpoints import log_vkey
    from custody.ledger.signing import signer_from_settings

    WitnessState(directory).trust(log_vkey(signer_from_settings(settings)))
