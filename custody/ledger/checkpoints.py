"""Signed checkpoints of the audit ledger, and the witness that keeps a copy.

After each append the :class:`Notary` signs the ledger's tree head as a C2SP
checkpoint (custody.ledger.tlog) and stores it at ``ledger/<scope>/tlog/<N>.json``
with the frontier (the roots of the perfect subtrees of N leaves), so the next
appender signs head N+1 from it without reading the whole log.

The same signed note goes to a witness: a second store the workers can add to
but not delete from or rewrite. ``CUSTODY_WITNESS_DIR`` is a folder the
operator controls (mounted append-only for the workers, or synchronised off the
box); ``CUSTODY_WITNESS_S3_BUCKET`` is a second bucket whose Object Lock keeps
each note for ``CUSTODY_WITNESS_LOCK_DAYS`` in COMPLIANCE mode. ``custody audit
verify`` proves the store's log consistent with the newest witnessed note, so
deleting the newest events and their checkpoints from the store shows.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody import ids
from custody.ledger import tlog
from custody.ledger.events import Event, Ledger, checkpoint_key
from custody.ledger.signing import PublicKeyRecord, Signer
from custody.stores import ObjectMissing, ObjectStore

if TYPE_CHECKING:
    from custody.settings import Settings

_WALK_BACK = 64  # checkpoints looked for below N before rebuilding from the first event


def origin(tenant: str | None) -> str:
    """The log's name in its checkpoints: one log per tenant scope."""
    return f"custody.ledger/{ids.scope(tenant)}"


def key_name(kid: str) -> str:
    return f"custody-signing/{kid}"


def note_keys(records: dict[str, PublicKeyRecord]) -> dict[str, Ed25519PublicKey]:
    """Signed-note verifier keys (name -> key) for these signing keys."""
    return {
        key_name(r.kid): Ed25519PublicKey.from_public_bytes(base64.b64decode(r.public_key))
        for r in records.values()
    }


def witness_key(tenant: str | None, size: int) -> str:
    return f"ledger/{ids.scope(tenant)}/{size:012d}.note"


class Notary:
    """Signs the tree head after each append and hands the note to the witness."""

    def __init__(self, signer: Signer, witness: ObjectStore | None = None) -> None:
        self.signer = signer
        self.witness = witness

    def seal(self, ledger: Ledger, size: int) -> bytes:
        frontier = _frontier_at(ledger, size)
        note = tlog.Note(origin(ledger.tenant), size, tlog.frontier_root(frontier))
        signed = tlog.sign_note(note, key_name(self.signer.kid), self.signer.public, self._sign)
        body = {"note": signed.decode(), "frontier": [h.hex() for h in frontier]}
        ledger.store.create(checkpoint_key(ledger.tenant, size), json.dumps(body).encode())
        if self.witness is not None:
            self.witness.create(witness_key(ledger.tenant, size), signed)
        return signed

    def _sign(self, message: bytes) -> bytes:
        return base64.b64decode(self.signer.sign(message).sig)


def checkpoint(ledger: Ledger, signer: Signer, head: Event | None = None) -> bytes:
    """Sign ``ledger``'s tree head up to ``head`` (default: the newest event).

    Appenders with a notary need not call this; it remains for callers that
    sign after the fact (the publish activity).
    """
    size = head.seq if head is not None else max(ledger.sequence_numbers(), default=0)
    return (ledger.notary or Notary(signer)).seal(ledger, size)


def _frontier_at(ledger: Ledger, size: int) -> list[bytes]:
    """The frontier of the first ``size`` events: from the nearest checkpoint below, then events."""
    base, frontier = 0, []
    for below in range(size, max(size - _WALK_BACK, 0), -1):
        found = _stored_frontier(ledger, below)
        if found is not None:
            base, frontier = below, found
            break
    for seq in range(base + 1, size + 1):
        frontier = tlog.frontier_push(frontier, seq - 1, tlog.leaf_hash(ledger.entry(seq)))
    return frontier


def _stored_frontier(ledger: Ledger, size: int) -> list[bytes] | None:
    """A checkpoint's frontier, only if it still yields the root the note signed."""
    try:
        body = json.loads(ledger.stored_checkpoint(size))
        frontier = [bytes.fromhex(h) for h in body["frontier"]]
        signed_root = body["note"].split("\n")[2]
    except (ObjectMissing, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    if len(frontier) != size.bit_count():
        return None
    root = base64.b64encode(tlog.frontier_root(frontier)).decode()
    return frontier if root == signed_root else None


def open_witness(settings: Settings) -> ObjectStore | None:
    """The configured witness store, or None when there is none."""
    if settings.witness_s3_bucket:
        from custody.stores.s3 import S3Store, client_from_settings

        return S3Store(
            client_from_settings(settings),
            settings.witness_s3_bucket,
            object_lock_days=settings.witness_lock_days,
        )
    if settings.witness_dir is not None:
        from custody.stores.local import LocalStore

        return LocalStore(settings.witness_dir)
    return None


def notary_from_settings(settings: Settings) -> Notary:
    from custody.ledger.signing import signer_from_settings

    return Notary(signer_from_settings(settings), open_witness(settings))


def witnessed(witness: ObjectStore, tenant: str | None) -> list[bytes]:
    """Every note the witness holds for the tenant's log: on S3, every version of every
    key, so a note hidden behind a delete marker or overwritten still counts."""
    folder = witness_key(tenant, 0).rpartition("/")[0] + "/"
    client, bucket = getattr(witness, "client", None), getattr(witness, "bucket", None)
    if client is None or bucket is None:
        return [witness.get(k) for k in witness.list(folder) if k.endswith(".note")]
    base = getattr(witness, "prefix", "")
    notes = []
    for page in client.get_paginator("list_object_versions").paginate(
        Bucket=bucket, Prefix=base + folder
    ):
        for version in page.get("Versions", []):
            reply = client.get_object(
                Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"]
            )
            notes.append(reply["Body"].read())
    return notes
