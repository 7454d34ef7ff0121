"""Where decisions are kept: the signed decision in the store, its hash in the ledger.

    decisions/<tenant or _>/<subject>/<at>-<kind>-<sha256[:16]>.json

Kept create-only before the ledger event naming it is appended, so every event
points at bytes that exist; ``custody verify`` re-checks the signature
against the identity registry (:func:`custody.operators.check_decision`).
"""

from __future__ import annotations

from custody import ids
from custody.canonical import canonical_json
from custody.ledger.events import Event, Ledger
from custody.operators.decisions import SignedDecision
from custody.stores import ObjectStore

DECISIONS = "decisions/"


def decision_key(tenant: str | None, subject: str, decision: SignedDecision) -> str:
    name = f"{decision.at:%Y%m%dT%H%M%S%fZ}-{decision.kind}-{decision.sha256()[:16]}.json"
    return f"{DECISIONS}{ids.scope(tenant)}/{subject}/{name}"


def keep(
    store: ObjectStore,
    decision: SignedDecision,
    *,
    tenant: str | None,
    subject: str,
    event: str,
    sha256: str | None = None,
    detail: dict[str, str | int | float | bool | list[str] | None] | None = None,
) -> tuple[str, Event]:
    """Store ``decision`` and append ``event`` naming it (actor: the person); its key and event."""
    key = decision_key(tenant, subject, decision)
    store.create(key, canonical_json(decision))
    appended = Ledger(store, tenant).append(
        event,
        sha256=sha256,
        actor=decision.by,
        detail={**(detail or {}), "decision": key, "decision_sha256": decision.sha256()},
    )
    return key, appended


def load(store: ObjectStore, key: str) -> SignedDecision:
    return SignedDecision.model_validate_json(store.get(key))
