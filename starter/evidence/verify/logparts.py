"""Checks of a log's parts that both the full and the incremental audit run.

tiles_problems   stored tiles and bundles against those the events make: a tile
                 missing, altered, or (a right-edge partial) not a prefix of its
                 successor
batches_check    ``ledger.batches``: the sequenced batches, in their chain, hold
                 exactly the events the tiles hold at their places
witness_check    ``ledger.witness``: the head's quorum, what each witness last
                 cosigned, every archived note (starter.evidence.verify.heads)
"""

from __future__ import annotations

from custody.errors import StoreError
from custody.ledger.events import Ledger
from custody.ledger.tiles import HASH, WIDTH, decode_bundle
from custody.ledger.witness import WitnessPolicy
from custody.stores import ObjectMissing, ObjectStore
from starter.evidence.verify.heads import (
    Head,
    Trusted,
    archive_problems,
    witness_problems,
)
from starter.evidence.verify.report import Check, checked


def tiles_problems(ledger: Ledger, made: dict[str, bytes]) -> list[str]:
    """Each object integration would write (``made``) against what is stored."""
    problems = []
    for key, want in made.items():
        name = key[len(ledger.prefix) :]
        try:
            found = _stored(ledger, key)
        except Exception:  # a seal that no longer opens: altered under it
            problems.append(f"{name} unreadable")
            continue
        if found is None:
            problems.append(f"{name} missing")
        elif not _agrees(key, found, want):
            problems.append(f"{name} altered")
    return problems


def _stored(ledger: Ledger, key: str) -> bytes | None:
    """The object, or for a partial the wider one that superseded it (it was deleted)."""
    try:
        return ledger.store.get(key)
    except ObjectMissing:
        pass
    if ".p/" not in key:
        return None
    folder = key.rpartition(".p/")[0]
    for candidate in [folder, *sorted(ledger.store.list(folder + ".p/"))]:
        try:
            return ledger.store.get(candidate)
        except ObjectMissing:
            continue
    return None


def _agrees(key: str, found: bytes, want: bytes) -> bool:
    """Equal, or for a partial tile or bundle found wider: what was made is its prefix."""
    if found == want or ".p/" not in key:
        return found == want
    if "/entries/" in key:
        mine = decode_bundle(want)
        try:
            return decode_bundle(found)[: len(mine)] == mine
        except ValueError:
            return False
    return len(found) <= WIDTH * HASH and found[: len(want)] == want


def batches_check(ledger: Ledger, entries: list[bytes | None], start: int = 0) -> Check:
    """The chain of batches after ``start`` (``entries[i]`` is event ``start + 1 + i``);
    from the start of the log, batches begin after a migrated log's old events."""
    if ledger.is_legacy():
        return Check(name="ledger.batches", ok=True, detail="a log from before tiles")
    base = start or len(ledger.legacy.sequence_numbers())
    problems, end = [], base
    try:
        batches = ledger.log.pending(ledger.store, base)
    except (ValueError, StoreError) as err:
        return checked("ledger.batches", [f"a batch after {base} unreadable ({err})"])
    for batch in batches:
        for offset, entry in enumerate(batch.entries):
            at = batch.first + offset - 1 - start
            if not 0 <= at < len(entries) or entries[at] != entry:
                problems.append(f"event {batch.first + offset} differs from its batch")
        end = batch.end
    if end < ledger.size():
        problems.append(f"batches end at {end}, the tiles hold {ledger.size()} (a batch missing)")
    return checked("ledger.batches", problems, f"{len(batches)} batches")


def witness_check(
    ledger: Ledger,
    trusted: Trusted,
    policy: WitnessPolicy | None,
    archive: ObjectStore | None,
    head: Head | str,
) -> Check:
    """``ledger.witness``: quorum on the head, the witnesses' sizes, every archived note."""
    tree = ledger.tree()
    problems, archived = archive_problems(ledger, tree, trusted, archive)
    if isinstance(head, str) and policy is not None and policy.quorum and ledger.size():
        problems.append(head)
    newest = head.signed if isinstance(head, Head) else ledger.newest_checkpoint()
    if policy is not None and newest is not None:  # a note of this log, to ask about it
        problems += witness_problems(ledger, tree, trusted, policy, newest)
    if policy is None or not policy.quorum:
        summary = "no witness required"
    else:
        summary = f"quorum {policy.quorum} of {len(policy.keys)}"
    return checked("ledger.witness", problems, f"{summary}; {archived} archived notes hold")
