"""Per-document inclusion proofs: each of a document's events is a leaf of the signed log.

``ledger.inclusion`` proves, for every event a document claims (its events, its
by-document index entries, its record's packet event), that the event's stored
bytes are leaf ``seq - 1`` of the Merkle tree (custody.ledger.tlog) that a trusted
checkpoint signs. The checkpoint is the newest note the witness holds when one
is configured (the workers cannot rewrite it), else the store's newest. The
audit path is built from the store's events and checked against the signed
root with the same RFC 9162 code the bundles use, so an event deleted, altered
or moved anywhere below the checkpoint fails the proof, as does a checkpoint no
anchor signed or one of another log.

Events appended after that checkpoint are not covered yet: they are counted,
not failed (``custody audit verify`` proves how the log grew).
"""

from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody.errors import StoreError
from custody.ledger import tlog
from custody.ledger.checkpoints import note_keys, origin, witnessed
from custody.ledger.events import Ledger
from custody.ledger.signing import PublicKeyRecord
from custody.stores import ObjectMissing, ObjectStore
from starter.evidence.verify.report import Check, failed

_CHECK = "ledger.inclusion"

_Leaves = tuple[list[bytes], frozenset[int]]  # leaf hashes, and the seqs that could not be read


class LogProofs:
    """Proves documents' events in their log's newest trusted checkpoint.

    One instance serves one verification run: it reads each log below a
    checkpoint once, however many of its documents are verified (``verify
    --all``), and never outlives the run, so nothing read before a later
    tampering is trusted after it.
    """

    def __init__(self, witness: ObjectStore | None = None) -> None:
        self.witness = witness
        self._leaves: dict[tuple[str | None, int], _Leaves] = {}

    def check(self, ledger: Ledger, seqs: set[int], keys: dict[str, PublicKeyRecord]) -> Check:
        """Every seq of ``seqs`` proven in the newest checkpoint a key of ``keys`` signed
        (``keys``: the trusted keys only, ``TrustAnchors.trusted``)."""
        if not seqs:
            return failed(_CHECK, "the document has no ledger events")
        found = _newest_note(ledger, note_keys(keys), self.witness)
        if isinstance(found, str):
            return failed(_CHECK, found)
        note, where = found
        if note.origin != origin(ledger.tenant):
            return failed(_CHECK, f"{where} {note.size} is another log's")
        problems = self._problems(ledger, sorted(s for s in seqs if s <= note.size), note, where)
        if problems:
            return failed(_CHECK, "; ".join(problems[:5]))
        later = sum(s > note.size for s in seqs)
        pending = f"; {later} after it, not yet checkpointed" if later else ""
        detail = f"{len(seqs) - later} events in {where} {note.size}{pending}"
        return Check(name=_CHECK, ok=True, detail=detail)

    def _problems(self, ledger: Ledger, seqs: list[int], note: tlog.Note, where: str) -> list[str]:
        key = (ledger.tenant, note.size)
        if key not in self._leaves:
            self._leaves[key] = _tree_leaves(ledger, note.size)
        leaves, unreadable = self._leaves[key]
        problems = []
        for seq in seqs:
            if seq in unreadable:
                problems.append(f"event {seq} (leaf {seq - 1}) missing or unreadable")
            elif not proven(leaves, seq - 1, note):
                problems.append(f"event {seq} (leaf {seq - 1}) not in {where} {note.size}")
        return problems


def proven(leaves: list[bytes], index: int, note: tlog.Note) -> bool:
    """Leaf ``index`` by its audit path in the first ``note.size`` leaves, under the signed root."""
    proof = tlog.inclusion_proof(leaves, index)
    return tlog.verify_inclusion(index, note.size, leaves[index], proof, note.root)


def _newest_note(
    ledger: Ledger, trusted: dict[str, Ed25519PublicKey], witness: ObjectStore | None
) -> tuple[tlog.Note, str] | str:
    """The checkpoint to prove against and where it came from, or why there is none."""
    if witness is not None:
        notes = (tlog.open_note(signed, trusted) for signed in witnessed(witness, ledger.tenant))
        opened = [note for note in notes if note is not None]
        if not opened:
            return "the witness holds no checkpoint a trusted key signed"
        return max(opened, key=lambda n: n.size), "witnessed checkpoint"
    size = max(ledger.checkpoint_sizes(), default=0)
    if size == 0:
        return "no signed checkpoint in the store"
    try:
        signed = json.loads(ledger.stored_checkpoint(size))["note"].encode()
    except (ObjectMissing, StoreError, ValueError, KeyError, TypeError, AttributeError):
        return f"checkpoint {size} unreadable"
    note = tlog.open_note(signed, trusted)
    if note is None:
        return f"checkpoint {size} not signed by a trusted key"
    if note.size != size:
        return f"checkpoint {size} holds tree size {note.size} (moved)"
    return note, "checkpoint"


def _tree_leaves(ledger: Ledger, size: int) -> _Leaves:
    """The leaf hashes of events 1..``size``; an event that cannot be read holds its
    place with the empty entry's leaf, so every proof through it fails."""
    leaves, unreadable = [], set()
    for seq in range(1, size + 1):
        try:
            leaves.append(tlog.leaf_hash(ledger.entry(seq)))
        except (ObjectMissing, StoreError, ValueError):
            leaves.append(tlog.leaf_hash(b""))
            unreadable.add(seq)
    return leaves, frozenset(unreadable)
