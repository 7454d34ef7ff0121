"""The audit ledger: an append-only, signed, witnessed transparency log per tenant.

    events        the log itself: events appended by conditional create, the by-document index
    tlog          RFC 9162 Merkle trees and C2SP signed notes (checkpoints), pure functions
    checkpoints   the Notary that signs tree heads, and the witness that keeps a copy
    signing       the Ed25519 signing key that records, checkpoints and versions are signed with

Reading the log back (audit, inclusion proofs) is the auditor's side:
``starter.evidence.verify``.
"""

from custody.ledger.checkpoints import Notary, notary_from_settings, open_witness
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signature, Signer, load_signer, signer_from_settings

__all__ = [
    "Event",
    "Ledger",
    "Notary",
    "Signature",
    "Signer",
    "load_signer",
    "notary_from_settings",
    "open_witness",
    "signer_from_settings",
]
