"""Security-relevant mutable state as create-only, signed, chained versions.

A setting that was one object rewritten in place (``pools/limits.json``) can
be rolled back by anyone who can write the store, keys or not: put back an old
copy and the old value is in force again. Here each change is a new object,
``<prefix>v<N>.json``, written with the store's create-if-absent, and the
reader takes the highest ``N``. Each version is sealed:

    {"prefix": ..., "n": N, "prev": sha256 of version N-1's stored bytes,
     "body": the state, "sig": Ed25519 over all four (custody.state.signers)}

so a reader refuses, with ``StateInvalid`` (``STATE_INVALID``), and never uses:

- a version with no signature, or one by a key not held outside the store
  (a store insider's forged newer version);
- a version copied from another prefix or number, or whose ``prev`` does not
  name the version before it (one replaced in the middle of the chain);
- a gap in the numbers (a version deleted from the middle);
- fewer versions than this process has already seen under that prefix of that
  store (the newest deleted: a rollback), or a seen version's bytes changed.

A process that never read the prefix learns that a newest version was deleted
from the transparency log: each version is also a ``state_version`` event of
the system log, appended after the version is written, and a store behind the
log is refused (custody.state.anchor, which documents the ordering and the
index). The bucket policy denying deletes on ``tenants/``, ``admission/``,
``pools/`` and ``ocr-config/`` stays the first line.

State written before versions existed: while no version exists, the old
single object (``legacy``) is unsigned, so anyone who can write the store can
create one. In production (``CUSTODY_ENV=production``) it is refused with
``STATE_INVALID``: migrate by writing the first version (any change does).
In development it is still read, with a ``state_legacy_read`` warning naming
the object key (never its content), and the first change supersedes it.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from weakref import WeakKeyDictionary

import structlog
from pydantic import BaseModel, ValidationError

from custody.canonical import canonical_json
from custody.errors import StateInvalid
from custody.ledger.signing import Signature
from custody.settings import Settings
from custody.state.anchor import Logged, check, log_version
from custody.state.signers import StateKeys, default_keys
from custody.stores import ObjectStore
from custody.stores.system import system_log_store

log = structlog.get_logger("custody.state.versions")

_MAX_RACE = 100
_WIDTH = 10  # zero-padded, so the store's lexical listing is numeric order
_PURPOSE = "custody.state.versions/1"  # never mistaken for another record the key signs


class _Version(BaseModel):
    prefix: str
    n: int
    prev: str | None
    body: str
    sig: Signature | None = None

    def payload(self) -> bytes:
        fields = {"purpose": _PURPOSE, "prefix": self.prefix, "n": self.n, "prev": self.prev}
        return canonical_json({**fields, "body": self.body})


@dataclass(frozen=True)
class _Head:
    """The newest verified version of one prefix: its number, stored bytes' hash, body."""

    n: int
    sha256: str
    body: bytes


# What each store's prefixes held when this process last read them (weak: a
# store dropped and another made at the same address is not mistaken for it).
_SEEN: WeakKeyDictionary[ObjectStore, dict[str, _Head]] = WeakKeyDictionary()
_LOCK = threading.Lock()
_WARNED: set[tuple[str, int]] = set()  # unlogged versions already warned of


def _key(prefix: str, n: int) -> str:
    return f"{prefix}v{n:0{_WIDTH}d}.json"


def _numbers(store: ObjectStore, prefix: str) -> list[int]:
    found = []
    for key in store.list(f"{prefix}v"):
        stem = key[len(prefix) + 1 :].removesuffix(".json")
        if len(stem) == _WIDTH and stem.isascii() and stem.isdigit():
            found.append(int(stem))
    return sorted(found)


def latest(
    store: ObjectStore,
    prefix: str,
    legacy: str | None = None,
    *,
    keys: StateKeys | None = None,
    production: bool | None = None,
) -> bytes | None:
    """The newest verified version under ``prefix``; else the ``legacy`` object; else None.

    ``production``: refuse an unsigned legacy object (None: ``CUSTODY_ENV`` decides).
    """
    keys = keys or default_keys(write=False)
    head = _head(store, prefix, keys)
    _anchored(store, prefix, head, keys)
    if head is not None:
        return head.body
    if legacy is None or not store.exists(legacy):
        return None
    if Settings().env == "production" if production is None else production:
        raise StateInvalid(detail=f"{legacy}: unsigned legacy state is refused in production")
    log.warning("state_legacy_read", key=legacy, prefix=prefix)
    return store.get(legacy)


def append(store: ObjectStore, prefix: str, body: bytes, *, keys: StateKeys | None = None) -> int:
    """Sign ``body`` as the next version under ``prefix``; returns its number.

    The chain and its anchor are verified first: a change is never stacked on
    a forged or rolled-back version. The version is written, then logged.
    """
    keys = keys or default_keys()
    head = _head(store, prefix, keys)
    logged = _anchored(store, prefix, head, keys)
    if head is not None and (logged is None or logged.n < head.n):
        # A crashed writer's version, or one from before the log held versions.
        log_version(_log(store, keys), prefix, head.n, head.sha256, keys.signer, keys.witness)
    for _ in range(_MAX_RACE):
        n, prev = (head.n + 1, head.sha256) if head else (1, None)
        version = _Version(prefix=prefix, n=n, prev=prev, body=body.decode())
        signed = version.model_copy(update={"sig": keys.sign(version.payload())})
        raw = canonical_json(signed.model_dump(mode="json"))
        if store.create(_key(prefix, n), raw):
            _remember(store, prefix, _Head(n, _sha256(raw), body))
            log_version(_log(store, keys), prefix, n, _sha256(raw), keys.signer, keys.witness)
            return n
        # A racer took N (or the listing was stale): its version must chain too.
        head = _verified(store, prefix, n, head, keys)
    raise RuntimeError(f"versions under {prefix} kept losing races")


def _head(store: ObjectStore, prefix: str, keys: StateKeys) -> _Head | None:
    """Verify the chain (from the last head this process saw) and return its newest."""
    seen = _SEEN.get(store, {}).get(prefix)  # before listing: a later append is listed too
    numbers = _numbers(store, prefix)
    if numbers != list(range(1, len(numbers) + 1)):
        missing = min(set(range(1, max(numbers) + 1)) - set(numbers))
        raise StateInvalid(detail=f"{prefix}: version {missing} is missing")
    if seen is not None and len(numbers) < seen.n:
        raise StateInvalid(detail=f"{prefix}: version {seen.n} was seen and is gone")
    head = seen
    if head is not None and _sha256(store.get(_key(prefix, head.n))) != head.sha256:
        raise StateInvalid(detail=f"{prefix}: version {head.n} changed since it was read")
    for n in range((head.n if head else 0) + 1, len(numbers) + 1):
        head = _verified(store, prefix, n, head, keys)
    if head is not None:
        _remember(store, prefix, head)
    return head


def _anchored(
    store: ObjectStore, prefix: str, head: _Head | None, keys: StateKeys
) -> Logged | None:
    """The log's newest version of ``prefix``, refusing a store behind it (or a truncated log).

    A store ahead of the log (written, then the writer died before logging)
    is tolerated: warned once per process and version, logged by the next writer.
    """
    n, sha256 = (head.n, head.sha256) if head else (0, None)
    witness = (keys.witness, keys.trusted) if keys.witness is not None else None
    logged = check(_log(store, keys), prefix, n, sha256, witness)
    if head is not None and (logged is None or logged.n < n) and (prefix, n) not in _WARNED:
        _WARNED.add((prefix, n))
        log.warning("state_unlogged", prefix=prefix, n=n, logged=logged.n if logged else 0)
    return logged


def _log(store: ObjectStore, keys: StateKeys) -> ObjectStore:
    """The system log as the ledger keeps it (sealed), seen from the store state is read in."""
    return system_log_store(store, keys.keyring)


def _remember(store: ObjectStore, prefix: str, head: _Head) -> None:
    """Keep the newest head seen; a slower reader of an older one never moves it back."""
    with _LOCK:
        heads = _SEEN.setdefault(store, {})
        if prefix not in heads or heads[prefix].n < head.n:
            heads[prefix] = head


def _verified(
    store: ObjectStore, prefix: str, n: int, before: _Head | None, keys: StateKeys
) -> _Head:
    raw = store.get(_key(prefix, n))
    try:
        version = _Version.model_validate_json(raw)
    except ValidationError:
        raise StateInvalid(detail=f"{prefix}: version {n} is not a sealed version") from None
    prev = before.sha256 if before else None
    if (version.prefix, version.n, version.prev) != (prefix, n, prev):
        raise StateInvalid(detail=f"{prefix}: version {n} is out of its chain")
    if version.sig is None:
        raise StateInvalid(detail=f"{prefix}: version {n} is not signed")
    why = keys.check(version.payload(), version.sig)
    if why is not None:
        raise StateInvalid(detail=f"{prefix}: version {n}: {why}")
    return _Head(n, _sha256(raw), version.body.encode())


def _sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def stored_head(store: ObjectStore, prefix: str) -> tuple[int, str | None]:
    """The highest version number present under ``prefix`` and its stored bytes' hash.

    Unverified: ``custody audit verify`` compares it with the log's newest.
    """
    numbers = _numbers(store, prefix)
    if not numbers:
        return 0, None
    return numbers[-1], _sha256(store.get(_key(prefix, numbers[-1])))
