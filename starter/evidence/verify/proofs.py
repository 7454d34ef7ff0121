"""Per-document inclusion proofs: each of a document's events is a leaf of the signed log.

``ledger.inclusion`` proves, for every event a document claims (its events, its
by-document index entries, its record's packet event), that the event's stored
bytes are leaf ``seq - 1`` of the Merkle tree a trusted checkpoint signs: the
newest checkpoint, cosigned by the witness quorum when one is required
(``starter.evidence.verify.heads``). The audit paths are read from the log's
tiles (O(log n) objects per event, shared between events) and checked against
the signed root with the RFC 9162 code the bundles use, so an event deleted,
altered or moved anywhere below the checkpoint fails the proof, as does a
checkpoint no anchor signed or one of another log.

``ledger.witness`` holds the log to what the witnesses last cosigned and to
every archived note, so a truncated log, or one rewritten and grown past its
old head, fails ``custody verify`` too, not only ``custody audit verify``.

Events appended after that checkpoint are not covered yet: they are counted,
not failed (``custody audit verify`` proves how the log grew).
"""

from __future__ import annotations

from custody.errors import Code, StoreError
from custody.ledger import tlog
from custody.ledger.checkpoints import note_keys
from custody.ledger.events import Ledger
from custody.ledger.signing import PublicKeyRecord
from custody.ledger.tiles import Tree
from custody.ledger.witness import WitnessPolicy
from custody.stores import ObjectMissing, ObjectStore
from starter.evidence.verify.heads import (
    Head,
    archive_problems,
    newest_head,
    witness_problems,
)
from starter.evidence.verify.report import Check, checked, failed

_CHECK = "ledger.inclusion"


class LogProofs:
    """Proves documents' events in their log's newest trusted checkpoint.

    One instance serves one verification run: it finds each log's head and
    asks its witnesses once, however many of its documents are verified
    (``verify --all``), and never outlives the run, so nothing read before a
    later tampering is trusted after it.
    """

    def __init__(
        self, witness: ObjectStore | None = None, policy: WitnessPolicy | None = None
    ) -> None:
        self.witness = witness  # a note archive, if any
        self.policy = policy
        self._heads: dict[str | None, tuple[Head | str, Check]] = {}

    def check(self, ledger: Ledger, seqs: set[int], keys: dict[str, PublicKeyRecord]) -> Check:
        """Every seq of ``seqs`` proven in the newest checkpoint a key of ``keys`` signed
        (``keys``: the trusted keys only, ``TrustAnchors.trusted``)."""
        return self.checks(ledger, seqs, keys)[0]

    def checks(
        self, ledger: Ledger, seqs: set[int], keys: dict[str, PublicKeyRecord]
    ) -> list[Check]:
        """``ledger.inclusion`` and, with a witness or an archive, ``ledger.witness``."""
        head, witness = self._head(ledger, keys)
        extra = [witness] if self.policy is not None or self.witness is not None else []
        if not seqs:
            return [failed(_CHECK, "the document has no ledger events"), *extra]
        if isinstance(head, str):
            return [failed(_CHECK, head), *extra]
        return [_inclusion(ledger, seqs, head), *extra]

    def _head(self, ledger: Ledger, keys: dict[str, PublicKeyRecord]) -> tuple[Head | str, Check]:
        if ledger.tenant not in self._heads:
            head = newest_head(ledger, note_keys(keys), self.policy)
            self._heads[ledger.tenant] = (head, self._witness_check(ledger, keys, head))
        return self._heads[ledger.tenant]

    def _witness_check(
        self, ledger: Ledger, keys: dict[str, PublicKeyRecord], head: Head | str
    ) -> Check:
        tree, trusted = ledger.tree(ledger.size()), note_keys(keys)
        problems, archived = archive_problems(ledger, tree, trusted, self.witness)
        newest = head.signed if isinstance(head, Head) else ledger.newest_checkpoint()
        if self.policy is not None and newest is not None:  # a note of this log, to ask about
            problems += witness_problems(ledger, tree, trusted, self.policy, newest)
        if self.policy is not None and isinstance(head, Head):
            problems += signed_in_validity(head, keys, self.policy)
        quorum = f"quorum {self.policy.quorum}" if self.policy is not None else "no quorum"
        return checked("ledger.witness", problems, f"{quorum}; {archived} archived notes hold")


def signed_in_validity(
    head: Head, keys: dict[str, PublicKeyRecord], policy: WitnessPolicy
) -> list[str]:
    """The head's signing key was valid when the witnesses saw it (their cosignatures'
    times): a key rotated out cannot sign a checkpoint that verifies."""
    seen = max(policy.cosigners(head.signed).values(), default=None)
    for kid, record in keys.items():
        if tlog.open_note(head.signed, note_keys({kid: record})) is None or seen is None:
            continue
        # Cosignature times are whole seconds: the signing may lie up to one after.
        early = record.valid_from is not None and record.valid_from.timestamp() > seen + 1
        late = record.valid_to is not None and record.valid_to.timestamp() < seen
        if early or late:
            return [f"{Code.KEY_OUTSIDE_VALIDITY}: checkpoint {head.note.size} signed by {kid}"]
    return []


def _inclusion(ledger: Ledger, seqs: set[int], head: Head) -> Check:
    note, where = head.note, head.where
    if note.size > ledger.size():
        return failed(_CHECK, f"{where} {note.size} covers more than the log's {ledger.size()}")
    tree, problems = ledger.tree(note.size), []
    for seq in sorted(s for s in seqs if s <= note.size):
        if not _proven(ledger, tree, seq, note):
            problems.append(f"event {seq} (leaf {seq - 1}) not in {where} {note.size}")
    if problems:
        return failed(_CHECK, "; ".join(problems[:5]))
    later = sum(s > note.size for s in seqs)
    pending = f"; {later} after it, not yet checkpointed" if later else ""
    detail = f"{len(seqs) - later} events in {where} {note.size}{pending}"
    return Check(name=_CHECK, ok=True, detail=detail)


def _proven(ledger: Ledger, tree: Tree, seq: int, note: tlog.Note) -> bool:
    """Event ``seq``'s stored bytes by their audit path from the tiles, under the signed root."""
    try:
        leaf = tlog.leaf_hash(ledger.entry(seq))
        proof = tree.inclusion(seq - 1)
    except (ObjectMissing, StoreError, ValueError):
        return False
    return tlog.verify_inclusion(seq - 1, note.size, leaf, proof, note.root)
