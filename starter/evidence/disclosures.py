"""The accounting of disclosures: for one patient, every time their documents left.

    custody egress report --field participant_id=P-00421 [--since ISO] --json
    [{"at", "recipient", "release_id", "description", "purpose"}, ...]

The patient's documents are found through the keyed field index
(``custody.field_index``: an HMAC of the value under the keyring, never a
plaintext index), then every egress event of the tenant that handed any of
them out (a release to a recipient, a read, an export, a review), oldest
first, from the egress index. An event of several documents names each by a
salted hash only; its sealed list (``custody.state.egress.event_salts``) says
whether it carried one of the patient's. ``purpose`` is the one recorded with
the event: the request's, else its policy's (a read, export or review
hand-out: the tenant policy's); None for events from before purposes were
recorded, or where there was none to record.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from custody import egress as eg
from custody import field_index
from custody.state.egress import egress_events
from custody.stores import ObjectStore

#: The keys of one disclosure, as the issue spells them (a contract).
KEYS = ("at", "recipient", "release_id", "description", "purpose")


def disclosures(
    store: ObjectStore,
    tenant: str | None,
    field: str,
    value: str,
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """Every disclosure of the tenant's documents whose ``field`` reads ``value``."""
    documents = set(field_index.find(store, tenant, field, value))
    if not documents:
        return []
    return [
        _disclosure(event, documents)
        for event in egress_events(store, tenant)
        if documents.intersection(event.documents) and (since is None or event.at >= since)
    ]


def _disclosure(event: eg.EgressRecord, documents: set[str]) -> dict[str, Any]:
    return {
        "at": event.at.isoformat(),
        # A read or export goes to whoever asked: the key or person the event names.
        "recipient": event.recipient or event.actor,
        "release_id": event.release_id,
        "description": _description(event, len(documents.intersection(event.documents))),
        "purpose": event.purpose,
    }


def _description(event: eg.EgressRecord, mine: int) -> str:
    """What left, in words made of names and counts only (never document content)."""
    what = {
        eg.EgressKind.RELEASE: "release",
        eg.EgressKind.READ: "read",
        eg.EgressKind.EXPORT: "evidence export",
        eg.EgressKind.REVIEW: "review hand-out",
    }[event.kind]
    files = f", {len(event.files)} file(s)" if event.files else ""
    return f"{what} of {mine} of the patient's document(s){files} under policy {event.policy}"
