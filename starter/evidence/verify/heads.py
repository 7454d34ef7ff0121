"""Which signed tree head a log is proven against, and what the witnesses say about it.

A checkpoint counts when a trusted key signed it for this log (the caller's
keys, ``starter.evidence.trust``) and, when the :class:`WitnessPolicy` asks for a
quorum, when that many pinned witnesses cosigned it. Beside the newest such
checkpoint, every witness is asked (C2SP tlog-witness, ``old 0``) for the size it
last cosigned, and the log must hold that size with the root that witness
cosigned: a log cut back below it (truncation) or rewritten beneath it, however
far the rewrite was made to grow, fails, since the witness never cosigned the
rewrite. Every note in a note archive is held to the log the same way, not
only the newest.

Everything here reads O(log n) tiles per head it checks (custody.ledger.tiles).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody.errors import StoreError
from custody.ledger import tlog
from custody.ledger.checkpoints import origin, witnessed
from custody.ledger.events import Ledger
from custody.ledger.tiles import Tree
from custody.ledger.witness import WitnessPolicy
from custody.stores import ObjectMissing, ObjectStore

Trusted = dict[str, Ed25519PublicKey]


@dataclass(frozen=True)
class Head:
    """A trusted checkpoint: what it says, its signed bytes and where it was found."""

    note: tlog.Note
    signed: bytes
    where: str


def opened(signed: bytes, tenant: str | None, trusted: Trusted, what: str) -> tlog.Note | str:
    """The checkpoint if a trusted key signed it for this tenant's log; else why not."""
    note = tlog.open_note(signed, trusted)
    if note is None:
        return f"{what} not signed by a trusted key"
    if note.origin != origin(tenant):
        return f"{what} is another log's ({note.origin})"
    return note


def stored_note(ledger: Ledger, size: int) -> bytes | None:
    """The note stored for tree ``size`` (``tlog/<size>.json``), None when absent or unreadable."""
    try:
        return str(json.loads(ledger.stored_checkpoint(size))["note"]).encode()
    except (ObjectMissing, StoreError, ValueError, KeyError, TypeError):
        return None


def newest_head(ledger: Ledger, trusted: Trusted, policy: WitnessPolicy | None) -> Head | str:
    """The newest checkpoint to prove against, with the witnesses' quorum if one is asked."""
    signed = ledger.newest_checkpoint()
    if signed is None:  # a log from before tiles keeps its checkpoints by size only
        sizes = ledger.checkpoint_sizes()
        signed = stored_note(ledger, max(sizes)) if sizes else None
    if signed is None:
        return "no signed checkpoint in the store"
    note = opened(signed, ledger.tenant, trusted, "the newest checkpoint")
    if isinstance(note, str):
        return note
    if policy is None or policy.met(signed):
        return Head(note, signed, "checkpoint")
    return _witnessed_head(ledger, trusted, policy, signed)


def _witnessed_head(
    ledger: Ledger, trusted: Trusted, policy: WitnessPolicy, newest: bytes
) -> Head | str:
    """The newest checkpoint lacked the quorum (a witness was down): the one the
    witnesses say they last cosigned, if the store keeps it."""
    sizes = sorted({s for c in policy.clients if (s := c.size(newest))}, reverse=True)
    for size in sizes:
        signed = stored_note(ledger, size)
        note = opened(signed, ledger.tenant, trusted, "") if signed else "absent"
        if signed is not None and not isinstance(note, str) and policy.met(signed):
            return Head(note, signed, "witnessed checkpoint")
    return f"no checkpoint cosigned by {policy.quorum} pinned witness(es)"


def note_problems(what: str, note: tlog.Note, tree: Tree) -> list[str]:
    """Why a signed tree head does not hold for the log ``tree`` reads (its full size)."""
    if note.size > tree.size:
        return [f"{what} covers {note.size} events, the log has {tree.size} (truncated)"]
    try:
        root = tree.root(note.size)
    except (ObjectMissing, StoreError, ValueError):
        return [f"{what}: the log's tiles below {note.size} are missing or unreadable"]
    return [] if root == note.root else [f"{what} disagrees with the log (rewritten)"]


def witness_problems(
    ledger: Ledger, tree: Tree, trusted: Trusted, policy: WitnessPolicy, newest: bytes
) -> list[str]:
    """Each witness's last cosigned size, held to the log: present, with the root cosigned."""
    problems = []
    for client in policy.clients:
        size = client.size(newest)
        if size is None:
            problems.append(f"witness {client.name} unreachable: truncation cannot be ruled out")
            continue
        if size == 0:
            continue
        signed = stored_note(ledger, size)
        cosigned = signed is not None and client.name in policy.cosigners(signed)
        note = opened(signed, ledger.tenant, trusted, "") if signed and cosigned else None
        if size > tree.size:
            problems.append(f"witness {client.name} cosigned size {size}, the log has {tree.size}")
        elif note is None or isinstance(note, str):
            problems.append(f"witness {client.name}'s checkpoint {size} is not in the store")
        else:
            problems += note_problems(f"witnessed checkpoint {size}", note, tree)
    return problems


def archive_problems(
    ledger: Ledger, tree: Tree, trusted: Trusted, archive: ObjectStore | None
) -> tuple[list[str], int]:
    """Every note the archive holds, held to the log (not only the largest); and how many."""
    if archive is None:
        return [], 0
    notes = witnessed(archive, ledger.tenant)
    problems = []
    for signed in notes:
        note = opened(signed, ledger.tenant, trusted, "an archived note")
        if isinstance(note, str):
            problems.append(note)
            continue
        problems += note_problems(f"archived checkpoint {note.size}", note, tree)
    return problems, len(notes)
