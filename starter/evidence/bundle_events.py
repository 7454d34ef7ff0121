"""Which ledger events and receipts a document's evidence bundle carries, and which it leaves out.

A bundle is complete for its document and private to it:

- the document's own events (its by-document index), including the egress
  events of what left with it alone;
- for each release that carried it: the release's egress event when it commits
  to the documents by salted hashes (custody.state.egress), with this
  document's salt alone, so the auditor sees the document in it and nothing of
  the others; and the release's receipt event (its id and the receipt's hash);
- the signed receipt itself only when the document left alone: a receipt of
  several names them all, with their sizes.

What is left out is said, never silently: events written before salted
commitments (they name the other documents in the clear), receipts of several
documents, and events after the checkpoint the bundle is sealed to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from custody import egress as eg
from custody.ledger.events import Event, Ledger
from custody.state.egress import SignedReceipt, egress_events, event_salts
from custody.stores import ObjectMissing, ObjectStore


@dataclass
class Selected:
    """The bundle's events (seq -> event), salts by seq, receipts by release, and omissions."""

    events: dict[int, Event] = field(default_factory=dict)
    salts: dict[int, str] = field(default_factory=dict)
    receipts: dict[str, bytes] = field(default_factory=dict)
    left_out: list[dict[str, object]] = field(default_factory=list)


def select(store: ObjectStore, ledger: Ledger, sha256: str) -> Selected:
    chosen = Selected(events={e.seq: e for e in ledger.for_document(sha256)})
    for record in egress_events(store, ledger.tenant):
        if record.release_id is None or sha256 not in record.documents:
            continue
        _release(store, ledger, sha256, record, chosen)
    return chosen


def _release(
    store: ObjectStore, ledger: Ledger, sha256: str, record: eg.EgressRecord, chosen: Selected
) -> None:
    rid, tenant = str(record.release_id), ledger.tenant
    event = ledger.find(record.seq)
    if event is None:
        return  # verification of the document names a missing event; nothing to carry
    salt = event_salts(store, tenant, event).get(sha256)
    if salt is not None:
        chosen.events[event.seq], chosen.salts[event.seq] = event, salt
    elif event.sha256 != sha256:  # several documents, named in the clear (before salting)
        why = "names other documents (written before salted commitments)"
        chosen.left_out.append({"seq": event.seq, "why": why})
    key = eg.receipt_key(tenant, rid)
    try:
        body = store.get(key)
    except ObjectMissing:
        return  # not delivered (yet): no receipt to carry
    receipt_event = _receipt_event(store, ledger, key)
    if receipt_event is not None:
        chosen.events[receipt_event.seq] = receipt_event
    if SignedReceipt.model_validate_json(body).receipt.sources == [sha256]:
        chosen.receipts[rid] = body
    else:
        chosen.left_out.append({"receipt": rid, "why": "names other documents and their sizes"})


def _receipt_event(store: ObjectStore, ledger: Ledger, key: str) -> Event | None:
    """The receipt's ledger event, found through the markers ``append_once`` left."""
    prefix = f"{key}.event/seq/"
    for marker in [*store.list(prefix), *ledger.pending_markers(prefix)]:
        event = ledger.find(int(marker[len(prefix) :]))
        if event is not None and event.kind == eg.RECEIPT_EVENT:
            return event
    return None
