"""Signed checkpoints of the audit ledger, cosigned by independent witnesses.

After each integration (custody.ledger.sequencer) the :class:`Notary` signs the
tree head as a C2SP checkpoint, sends it to every witness (custody.ledger.witness,
C2SP tlog-witness) with a consistency proof from the size that witness last
cosigned, and appends the cosignatures it gets back. The note goes to
``ledger/<scope>/checkpoint`` (the newest, C2SP tlog-tiles' name) and to
``ledger/<scope>/tlog/<N>.json`` (one per size, kept). A witness keeps its own
state and key, outside the store and the workers' reach, and refuses a
checkpoint not consistent with the last one it cosigned: so a rewritten or
truncated history cannot be cosigned again, however far it is made to grow.

Beside the witnesses, a note archive the workers can add to but not rewrite
may keep every signed note: ``CUSTODY_WITNESS_DIR`` (a folder the operator
controls) or ``CUSTODY_WITNESS_S3_BUCKET`` (Object Lock, COMPLIANCE mode, for
``CUSTODY_WITNESS_LOCK_DAYS``). ``custody audit verify`` checks every archived
note against the log, not only the newest.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody import ids
from custody.ledger import tlog
from custody.ledger.cosign import NOTE_KEY, vkey
from custody.ledger.events import Ledger, checkpoint_key, newest_checkpoint_key
from custody.ledger.integrate import Integrator
from custody.ledger.signing import PublicKeyRecord, Signer
from custody.ledger.tiles import Tree
from custody.ledger.witness import WitnessClient, policy_from_settings
from custody.stores import ObjectMissing, ObjectStore

if TYPE_CHECKING:
    from custody.settings import Settings


def origin(tenant: str | None) -> str:
    """The log's name in its checkpoints: one log per tenant scope."""
    return f"custody.ledger/{ids.scope(tenant)}"


def key_name(kid: str) -> str:
    return f"custody-signing/{kid}"


def log_vkey(signer: Signer) -> str:
    """The signing key as a witness is told to trust it (a signed-note vkey)."""
    return vkey(key_name(signer.kid), signer.public, NOTE_KEY)


def note_keys(records: dict[str, PublicKeyRecord]) -> dict[str, Ed25519PublicKey]:
    """Signed-note verifier keys (name -> key) for these signing keys."""
    return {
        key_name(r.kid): Ed25519PublicKey.from_public_bytes(base64.b64decode(r.public_key))
        for r in records.values()
    }


def witness_key(tenant: str | None, size: int) -> str:
    return f"ledger/{ids.scope(tenant)}/{size:012d}.note"


def _tenant(log: Integrator) -> str | None:
    scope = log.prefix.split("/")[1]
    return None if scope == ids.scope(None) else scope


class Notary:
    """Signs each integrated tree head, has it cosigned, and keeps it (and in the archive)."""

    def __init__(
        self,
        signer: Signer,
        witness: ObjectStore | None = None,
        cosigners: Sequence[WitnessClient] = (),
    ) -> None:
        self.signer = signer
        self.witness = witness  # the note archive, if any
        self.cosigners = tuple(cosigners)

    def seal(self, ledger: Ledger, size: int) -> bytes:
        """Integrate ``ledger`` and sign its head (covering at least ``size``)."""
        if ledger.notary is not self:
            ledger = Ledger(ledger.raw, ledger.tenant, self)
        ledger.seal(size)
        return ledger.newest_checkpoint() or b""

    def sign_head(self, store: ObjectStore, log: Integrator, tree: Tree, root: bytes) -> bytes:
        tenant = _tenant(log)
        note = tlog.Note(origin(tenant), tree.size, root)
        name = key_name(self.signer.kid)
        signed = tlog.sign_note(note, name, self.signer.public, self._sign)
        lines = [c.cosign(signed, note.origin, tree) for c in self.cosigners]
        full = signed + b"".join(line for line in lines if line)
        self._keep(store, tenant, tree.size, full, cosigned=any(lines))
        if self.witness is not None:
            self.witness.create(witness_key(tenant, tree.size), signed)
        return full

    def _keep(
        self, store: ObjectStore, tenant: str | None, size: int, note: bytes, cosigned: bool
    ) -> None:
        """The note at its size (replacing one an earlier try could not have cosigned) and,
        unless a larger one is there, as the newest."""
        body = json.dumps({"note": note.decode()}).encode()
        if not store.create(checkpoint_key(tenant, size), body) and cosigned:
            store.put(checkpoint_key(tenant, size), body)
        if _stored_size(store, tenant) <= size:
            store.put(newest_checkpoint_key(tenant), note)

    def _sign(self, message: bytes) -> bytes:
        return base64.b64decode(self.signer.sign(message).sig)


def _stored_size(store: ObjectStore, tenant: str | None) -> int:
    try:
        return int(store.get(newest_checkpoint_key(tenant)).split(b"\n")[1])
    except (ObjectMissing, IndexError, ValueError):
        return 0


def checkpoint(ledger: Ledger, signer: Signer, head: object | None = None) -> bytes:
    """Integrate ``ledger`` and sign its head: for callers that sign after the fact (the
    publish activity); appenders with a notary need not call this."""
    notary = ledger.notary if isinstance(ledger.notary, Notary) else Notary(signer)
    return notary.seal(ledger, int(getattr(head, "seq", 0)))


def open_witness(settings: Settings) -> ObjectStore | None:
    """The configured note archive, or None when there is none."""
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


def notary_from_settings(settings: Settings, signer: Signer | None = None) -> Notary:
    """The notary of this deployment: its signing key, note archive and witnesses
    (in production, no witness is ``WITNESS_REQUIRED``)."""
    from custody.ledger.signing import signer_from_settings

    policy = policy_from_settings(settings)
    return Notary(signer or signer_from_settings(settings), open_witness(settings), policy.clients)


def witnessed(witness: ObjectStore, tenant: str | None) -> list[bytes]:
    """Every note the archive holds for the tenant's log: on S3, every version of every
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
