"""The Python SDK and the one place that connects to Temporal (``starter`` re-exports it).

admission  Admission control: one place, on the submit path every caller takes.
backlog    How many documents a tenant has in flight: the input to its fairness weight.
connect    The one place Custody connects to Temporal, and the client callers hold.
documents  A document as a caller hands it to ``submit``: a path, bytes, or a file already hashed.
failures   What a workflow the caller side started failed with: its activity's code, or a timeout.
metrics    Prometheus metrics of admission control, on the registry the edge's ``/metrics`` serves.
pause      The operator's pause: one flag every process that submits to this store obeys.
rates      Token buckets of admission control: one per (tenant, source), one per tenant.
read       Read-side helpers for operators and scripts: status, result, listing.
release    Release published documents to a registered recipient, and read egress back.
review     Documents waiting for a person: the queue, what a reviewer needs, a signed decision.
review_material  What a reviewer is shown of one document: fields and pages, as JSON.
route      Which OCR pool a new document goes to: the GPU pool while it keeps up, else the CPU's.
submit     What upstream Python systems call: ``submit`` a document, ``wait`` for it.
"""

__all__ = [
    "admission",
    "backlog",
    "connect",
    "documents",
    "failures",
    "metrics",
    "pause",
    "rates",
    "read",
    "release",
    "review",
    "review_material",
    "route",
    "submit",
]
