"""The development deployment's own ``admin``: made by ``custody up`` the first time.

A development stack would otherwise start with nobody allowed to decide
anything. In production nothing is made here: the first admin comes from
``custody operators bootstrap``, run where the deployment's signing key is.
"""

from __future__ import annotations

from pathlib import Path

from custody import operators as ops
from custody.settings import Settings
from custody.stores import open_store

ADMIN = "admin"


def local_admin(settings: Settings) -> Path | None:
    """The key file of the local ``admin`` (made now if no identity exists); None in production
    or when the admin's key file is not in this home."""
    if settings.env == "production":
        return None
    store = open_store(settings)
    folder = settings.home / "operators"
    found = ops.get(store, ADMIN)
    if found is None and not ops.list_identities(store):
        path, private = ops.issue(folder, ADMIN)
        ops.bootstrap(store, ADMIN, private.public_key(), days=settings.operator_days)
        return path
    if found is None:
        return None
    kept = folder / f"{ADMIN}-{found.kid}.key"
    return kept if kept.exists() else None
