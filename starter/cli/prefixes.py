"""Documents on the command line by any unique prefix of their SHA-256, as git names commits.

Tables print 12 characters; every argument that names a document (the
parsers' ``sha256``, ``document`` and ``documents``) takes a prefix of at
least :data:`MIN_PREFIX` hex characters, resolved before the command runs,
within the command's tenant (``--tenant``; none given: the documents
submitted without one). A prefix naming two documents is AMBIGUOUS_PREFIX
(exit 2) with that tenant's matches listed; naming none, NOT_FOUND (exit 5).

The object store answers, not Temporal: it holds a key for every document
ever submitted (its intake object from the first byte, then its source,
record or outcome), long after Temporal's retention. Only the CLI resolves
prefixes: the HTTP edge takes whole SHA-256s, so no caller can enumerate a
tenant's documents by guessing short ones.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from custody import ids
from custody.errors import AmbiguousPrefix, NotFound, UsageError
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from starter.cli.options import DOCUMENT_DESTS

MIN_PREFIX = 8
#: Key families laid out ``<kind>/<tenant or _>/<sha256>...`` (custody.ids, starter.edge.manual).
_KINDS = ("intake", "sources", "records", "outcomes", "manual")
_HEX = re.compile(r"^[0-9a-f]+$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


def resolve_documents(args: argparse.Namespace, settings: Settings) -> None:
    """Replace every prefix (and, for ``document``, every file path) in ``args`` by a SHA-256.

    The store is opened only when some argument is a prefix to look up.
    """
    tenant = getattr(args, "tenant", None)
    stores: list[ObjectStore] = []

    def store() -> ObjectStore:
        if settings.store == "local" and not settings.objects_dir.is_dir():
            raise NotFound("here: this home holds no store yet")  # and a lookup makes none
        if not stores:
            stores.append(open_store(settings))
        return stores[0]

    for dest in DOCUMENT_DESTS:
        value = getattr(args, dest, None)
        if isinstance(value, str):
            setattr(args, dest, _one(value, dest, tenant, store))
        elif isinstance(value, list):
            setattr(args, dest, [_one(v, dest, tenant, store) for v in value])


def _one(value: str, dest: str, tenant: str | None, store: Callable[[], ObjectStore]) -> str:
    text = value.strip().lower()
    if _SHA.match(text):
        return text
    if dest == "document" and Path(value).is_file():
        return _sha_of_file(Path(value))
    if MIN_PREFIX <= len(text) < 64 and _HEX.match(text):
        return resolve(store(), text, tenant)
    if dest == "document":
        raise NotFound(f"or file {value!r} (give a path, a SHA-256 or {MIN_PREFIX}+ of its hex)")
    raise UsageError(
        detail=f"{value!r} is not a SHA-256 nor a prefix of at least {MIN_PREFIX} hex characters"
    )


def resolve(store: ObjectStore, prefix: str, tenant: str | None) -> str:
    """The one document of ``tenant`` whose SHA-256 starts with ``prefix``."""
    found = sorted(matches(store, prefix, tenant))
    if not found:
        raise NotFound(f"starts with {prefix} for this tenant")
    if len(found) > 1:
        raise AmbiguousPrefix(prefix, found)
    return found[0]


def matches(store: ObjectStore, prefix: str, tenant: str | None) -> set[str]:
    """Every SHA-256 of ``tenant``'s documents that starts with ``prefix``."""
    scope = ids.scope(ids.check_tenant(tenant))
    found: set[str] = set()
    for kind in _KINDS:
        folder = f"{kind}/{scope}/"
        for key in store.list(folder + prefix):
            sha = key[len(folder) : len(folder) + 64]
            if _SHA.match(sha):
                found.add(sha)
    return found


def _sha_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
