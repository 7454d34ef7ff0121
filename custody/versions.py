"""Security-relevant mutable state as create-only versions: newest wins, none rewritten.

A setting that was one object rewritten in place (``pools/limits.json``) can
be rolled back by anyone who can write the store, keys or not: put back an old
copy and the old value is in force again. Here each change is a new object,
``<prefix>v<N>.json``, written with the store's create-if-absent, and the
reader takes the highest ``N``. Restoring an old copy of any object changes
nothing, since the newer version is still there; undoing a change needs a
delete, or a forged newer version: Custody's own Object Lock covers only the
evidence prefixes, so a deployment denies deletes on ``tenants/``,
``admission/``, ``pools/`` and ``ocr-config/`` in its bucket policy, and the
versions are not yet signed (a store insider can still add one).

State written before versions existed stays readable: while no version exists
the old single object (``legacy``) is read, and the first change supersedes it.
"""

from __future__ import annotations

from custody.stores import ObjectStore

_MAX_RACE = 100
_WIDTH = 10  # zero-padded, so the store's lexical listing is numeric order


def _key(prefix: str, n: int) -> str:
    return f"{prefix}v{n:0{_WIDTH}d}.json"


def _numbers(store: ObjectStore, prefix: str) -> list[int]:
    found = []
    for key in store.list(f"{prefix}v"):
        stem = key[len(prefix) + 1 :].removesuffix(".json")
        if len(stem) == _WIDTH and stem.isascii() and stem.isdigit():
            found.append(int(stem))
    return sorted(found)


def latest(store: ObjectStore, prefix: str, legacy: str | None = None) -> bytes | None:
    """The newest version under ``prefix``; else the ``legacy`` object; else None."""
    numbers = _numbers(store, prefix)
    if numbers:
        return store.get(_key(prefix, numbers[-1]))
    if legacy is not None and store.exists(legacy):
        return store.get(legacy)
    return None


def append(store: ObjectStore, prefix: str, body: bytes) -> int:
    """Write ``body`` as the next version under ``prefix``; returns its number."""
    numbers = _numbers(store, prefix)
    n = numbers[-1] if numbers else 0
    for _ in range(_MAX_RACE):
        n += 1
        if store.create(_key(prefix, n), body):
            return n
    raise RuntimeError(f"versions under {prefix} kept losing races")
