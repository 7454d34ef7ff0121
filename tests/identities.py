"""Named identities for tests: real key files, registered in the test's own store.

Every decision command needs an acting identity (``CUSTODY_OPERATOR_CREDENTIAL``);
:func:`as_person` registers one (bootstrapping the deployment's admin first, as
``custody up`` does) and returns the settings a command run as that person takes.
"""

from __future__ import annotations

from custody import operators as ops
from custody.operators import Role
from custody.settings import Settings
from custody.stores import ObjectStore, open_store


def as_person(
    settings: Settings,
    name: str,
    *roles: Role,
    store: ObjectStore | None = None,
    days: float = 30.0,
) -> Settings:
    """``settings`` acting as ``name`` (made now, with ``roles``; default reviewer)."""
    store = store or open_store(settings)
    folder = settings.home / "operators"
    if not ops.list_identities(store):
        _, private = ops.issue(folder, "root")
        ops.bootstrap(store, "root", private.public_key(), days=days)
    path, private = ops.issue(folder, name)
    ops.add(
        store, name, list(roles or (Role.REVIEWER,)), private.public_key(), by="root", days=days
    )
    return settings.model_copy(update={"operator_credential": path})
