"""Verification is a replay: the checks of ``custody verify``, ``audit verify``, ``egress verify``.

audit       ``custody audit verify``: one tenant's log replayed against its checkpoints and the
            witness.
document    Verification is a replay, not a green dashboard.
egress      ``custody egress verify``: a release's receipt replayed against the store and the
            ledger.
ledger      The ledger's checks for one document: its events, in place in the chain.
objects     Checks of one document's stored objects, each against something that pins it.
proofs      Per-document inclusion proofs: each of a document's events is a leaf of the signed log.
receipts    The receipts of releases that carried a document, replayed as part of its verification.
redactions  Checks of a document's redacted views, part of ``custody verify``.
report      What verification answers: named checks, each passed or failed, per subject.
versions    On a versioned S3 bucket: a document's evidence objects each have one version, none
            hidden.
"""

__all__ = [
    "audit",
    "document",
    "egress",
    "ledger",
    "objects",
    "proofs",
    "receipts",
    "redactions",
    "report",
    "versions",
]
