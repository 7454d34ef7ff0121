"""The Python SDK and the one place that connects to Temporal (``starter`` re-exports it).

backlog  How many documents a tenant has in flight: the input to its fairness weight.
connect  The one place Custody connects to Temporal, and the client callers hold.
read     Read-side helpers for operators and scripts: status, result, listing.
release  Release published documents to a registered recipient, and read egress back.
route    Which OCR pool a new document goes to: the GPU pool while it keeps up, else the CPU's.
submit   What upstream Python systems call: ``submit`` a document, ``wait`` for it.
tracing  OpenTelemetry tracing across the edge, the workflow and its activities (off by default).
"""

__all__ = [
    "backlog",
    "connect",
    "read",
    "release",
    "route",
    "submit",
    "tracing",
]
