"""``custody audit verify --state-file PATH``: a log's growth since the auditor last looked.

The auditor keeps, outside the store, the last tree head it verified (size and
root, per tenant). The next run proves the newest trusted checkpoint an
extension of it and reads only what was added:

    ledger.consistency  the tree head kept in the state file is a prefix of the newest
                        checkpoint: the stored edge of the old tree yields the kept root,
                        the new events from the entry bundles extend it to the signed
                        root, the tiles written for them are those, and the RFC 9162
                        consistency proof from the tiles verifies
    ledger.chain        the new events link to the old head and to each other
    ledger.batches      the batches of the new events hold exactly them
    ledger.index        every new event of a document has its index entry
    ledger.witness      as the full audit: quorum, the witnesses' sizes, archived notes

O(new events + log n) objects. A log rewritten below the kept head fails, even
if every checkpoint in the store was re-signed to match the rewrite.
"""

from __future__ import annotations

import base64

from pydantic import BaseModel

from custody import ids
from custody.errors import StoreError
from custody.ledger import tlog
from custody.ledger.checkpoints import note_keys
from custody.ledger.edge import Edge
from custody.ledger.events import Event, Ledger, marker_key
from custody.ledger.signing import PublicKeyRecord
from custody.ledger.tiles import Tiles
from custody.ledger.witness import WitnessPolicy
from custody.stores import ObjectMissing, ObjectStore
from starter.evidence.verify.audit import check, read_chain
from starter.evidence.verify.heads import Head, newest_head
from starter.evidence.verify.logparts import batches_check, tiles_problems, witness_check
from starter.evidence.verify.report import Check, Report


class Verified(BaseModel):
    """A tree head the auditor verified: what the state file keeps per tenant."""

    size: int
    root: str  # base64, as in a checkpoint

    def root_bytes(self) -> bytes:
        return base64.b64decode(self.root)


def verify_since(
    store: ObjectStore,
    tenant: str | None,
    keys: dict[str, PublicKeyRecord],
    last: Verified,
    witness: ObjectStore | None = None,
    policy: WitnessPolicy | None = None,
) -> tuple[Report, Verified | None]:
    """The checks above, and the head to keep next (None: nothing may be kept)."""
    subject = f"ledger/{ids.scope(tenant)}"
    try:
        ledger, trusted = Ledger(store, tenant), note_keys(keys)
        head = newest_head(ledger, trusted, policy)
        if isinstance(head, str):
            checks = [Check(name="ledger.consistency", ok=False, detail=head)]
        else:
            checks = _grown(ledger, last, head)
            checks.append(witness_check(ledger, trusted, policy, witness, head))
    except Exception as exc:  # one tenant's unreadable log is its FAIL, not everyone's abort
        checks, head = [Check(name="ledger.readable", ok=False, detail=type(exc).__name__)], ""
    ok = all(c.ok for c in checks)
    to = head.note.size if isinstance(head, Head) else None
    report = Report(subject=subject, ok=ok, checks=checks, from_size=last.size, to_size=to)
    return report, kept(head) if ok and isinstance(head, Head) else None


def kept(head: Head) -> Verified:
    return Verified(size=head.note.size, root=base64.b64encode(head.note.root).decode())


def _grown(ledger: Ledger, last: Verified, head: Head) -> list[Check]:
    note = head.note
    if note.size < last.size:
        why = f"the newest checkpoint ({note.size}) is older than the verified {last.size}"
        return [Check(name="ledger.consistency", ok=False, detail=why)]
    before = ledger.find(last.size) if last.size else None
    entries, events, chain = read_chain(ledger, last.size + 1, before)
    if last.size and before is None:
        chain.insert(0, f"event {last.size}, the verified head, unreadable")
    new = entries[: note.size - last.size]
    return [
        check("ledger.consistency", _consistency(ledger, last, note, new), _span(last, note)),
        check("ledger.chain", chain, f"{len(entries)} new events"),
        batches_check(ledger, entries, last.size),
        check("ledger.index", _index_problems(ledger, events), f"{len(events)} new events"),
    ]


def _span(last: Verified, note: tlog.Note) -> str:
    return f"{last.size} -> {note.size}"


def _consistency(
    ledger: Ledger, last: Verified, note: tlog.Note, new: list[bytes | None]
) -> list[str]:
    """The old head, grown by the new events, is the signed head; and the tiles say so too."""
    try:
        edge = Edge.load(Tiles(ledger.store, ledger.prefix), last.size)
    except (ObjectMissing, StoreError, ValueError):
        return [f"the tiles of the verified tree {last.size} are missing or unreadable"]
    if edge.root() != last.root_bytes():
        return [f"the log's tree {last.size} is not the one verified (rewritten)"]
    if any(e is None for e in new):
        return ["new events unreadable: the growth cannot be proven"]
    made = edge.extend([e for e in new if e is not None])
    if edge.root() != note.root:
        return [f"the new events do not make checkpoint {note.size}'s root"]
    problems = tiles_problems(ledger, made.create)
    proof = ledger.tree(note.size).consistency(last.size)
    if not tlog.verify_consistency(last.size, note.size, last.root_bytes(), note.root, proof):
        problems.append(f"the tiles' consistency proof {last.size} -> {note.size} fails")
    return problems


def _index_problems(ledger: Ledger, events: dict[int, Event]) -> list[str]:
    """Each new document event's index entry exists (or is due from its pending batch)."""
    problems, size = [], ledger.size()
    for seq, event in sorted(events.items()):
        if event.sha256 is None or seq > size:
            continue
        if not ledger.store.exists(marker_key(ledger.tenant, event.sha256, seq)):
            problems.append(f"event {seq} missing from the index")
    return problems
