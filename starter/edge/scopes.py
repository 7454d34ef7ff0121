"""What an API key may do: its scopes, and the scope each route needs.

    upload      PUT|POST /v1/documents, POST /v1/preview
    read        GET /v1/documents/{sha256}
    release     /v1/releases...
    review      /v1/reviews... (the review API and the review page's queue)
    admin       GET /metrics
    legacy-all  every route: keys minted before scopes existed (a tenant's first key,
                until it has a key record); production refuses it

A key is minted with the scopes it is given (``custody tenants keys add
--scope``); ``custody tenants add`` mints one with ``upload`` and ``read``
unless told otherwise, so a scanner's key cannot read a tenant's documents
back or send them anywhere. A request outside its key's scopes is answered
403 ``SCOPE_DENIED`` before anything is read or staged.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Scope(StrEnum):
    UPLOAD = "upload"
    READ = "read"
    RELEASE = "release"
    REVIEW = "review"
    ADMIN = "admin"
    LEGACY_ALL = "legacy-all"


#: What ``custody tenants add`` gives the tenant's first key unless told otherwise.
DEFAULT_SCOPES: tuple[Scope, ...] = (Scope.UPLOAD, Scope.READ)
#: The scopes a person may mint (``legacy-all`` only ever describes an old key).
MINTABLE: tuple[Scope, ...] = tuple(s for s in Scope if s is not Scope.LEGACY_ALL)


def refusal(scopes: Iterable[str], needed: Scope, *, production: bool) -> str | None:
    """Why a key holding ``scopes`` may not use a route that needs ``needed``; None if it may."""
    held = set(scopes)
    if Scope.LEGACY_ALL in held:
        if production:
            return (
                "a key from before scopes (legacy-all) is refused in production; mint a scoped one"
            )
        return None
    if needed not in held:
        return f"this key's scopes ({', '.join(sorted(held)) or 'none'}) do not include {needed}"
    return None
