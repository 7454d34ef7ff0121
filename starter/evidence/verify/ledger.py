"""The ledger's checks for one document: its events, in place in the chain.

    ledger.published   the document has a ``published`` event
    ledger.packet      the record's packet event is in the chain with its hash
    ledger.chain       the document's events unaltered, in place and linked to both
                       neighbours; no holes around them

Reads a few events per event of the document, never the tenant's whole log:
``custody audit verify`` (starter.evidence.verify.audit) walks that, with the Merkle
tree, its signed checkpoints and the witness.
"""

from __future__ import annotations

from custody.errors import StoreError
from custody.ledger.events import GENESIS, Event, Ledger
from custody.models import EventRef
from custody.stores import ObjectMissing
from starter.evidence.verify.report import Check, checked


def document_ledger_checks(
    ledger: Ledger,
    mine: list[Event],
    indexed: set[int],
    packet: EventRef | None,
) -> list[Check]:
    checks = [Check(name="ledger.published", ok=any(e.kind == "published" for e in mine))]
    if packet is not None:
        found = _fetch(ledger, packet.seq)
        ok = isinstance(found, Event) and found.hash == packet.hash == found.body_hash()
        checks.append(Check(name="ledger.packet", ok=ok, detail=f"event {packet.seq}"))
    claimed = {e.seq for e in mine} | indexed | ({packet.seq} if packet else set())
    checks.append(chain_check(ledger, sorted(claimed)))
    return checks


def chain_check(ledger: Ledger, seqs: list[int]) -> Check:
    """The document's events and their links to both neighbours."""
    problems: list[str] = []
    for seq in seqs:
        event = _fetch(ledger, seq)
        if event is None:
            if ledger.has(seq + 1):  # a hole in the chain, not a crashed append at the head
                problems.append(f"event {seq} missing")
            continue
        if isinstance(event, str):
            problems.append(event)
            continue
        before = _fetch(ledger, seq - 1) if seq > 1 else None
        if not isinstance(before, Event) or before.seq != seq - 1:
            before = None  # absent or moved: that is its own problem, not this event's link
        problems += event_problems(seq, event, before)
        after = _fetch(ledger, seq + 1)
        if isinstance(after, Event) and after.prev != event.hash:
            problems.append(f"event {seq + 1} does not follow event {seq}")
    return checked("ledger.chain", problems)


def _fetch(ledger: Ledger, seq: int) -> Event | str | None:
    """The event, None when absent, or a problem when it no longer reads as one."""
    try:
        return ledger.get(seq)
    except ObjectMissing:
        return None
    except (ValueError, StoreError):  # altered bytes, or a seal that no longer opens
        return f"event {seq} altered (unreadable)"


def event_problems(seq: int, event: Event, prev: Event | None) -> list[str]:
    """What is wrong with the event read at ``seq``: moved, altered, or not linked to ``prev``
    (the event read at ``seq - 1``; None: no link to check, unless ``seq`` is the first)."""
    problems = []
    if event.seq != seq:
        problems.append(f"event {seq} holds seq {event.seq} (moved)")
    if event.body_hash() != event.hash:
        problems.append(f"event {seq} altered")
    expected = GENESIS if seq == 1 else (prev.hash if prev is not None else None)
    if expected is not None and event.prev != expected:
        problems.append(f"event {seq} does not follow event {seq - 1}")
    return problems
