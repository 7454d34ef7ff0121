"""Releases: render, watermark and sign each file, then deliver it once by outbox, S3 or HTTPS.

addresses   Which network addresses an HTTPS recipient may be at: public unicast only.
build       Build one released file from a verified source (decoded in the sandboxed child).
c2pa_certs  X.509 for C2PA signing: a development chain, pairing checks, and finding the signer.
channels    Delivery channels: how a release packet reaches a recipient outside Custody, once.
delivery    Opening a recipient's channel: the one place that picks outbox, S3 or HTTPS.
encode      How a released page's pixels are stored: near its source's size, as legible, mark
            included.
https_push  HTTPS push: one POST per packet, retried with backoff, kept once by its idempotency
            key.
original    What a source page's own pixels were, where its raster no longer shows it: PDF scans.
pdfmeta     A release's identity: the mark, its check code, and what a released PDF embeds.
provenance  C2PA provenance for released files: sign each file for its release, read it back
            anywhere.
reach       Where a recipient's channel may go: addresses, Custody's own buckets and folders.
readback    Recognising a released copy by its printed mark alone, as ``custody egress identify``
            does.
render      The released file: each verified page with the release burned into its pixels.
s3_access   An S3 recipient's own credentials (a key pair or a role), never the workers'.
stamp       The watermark drawn on a released page: two bands around the scan and a diagonal
            across it.
store_push  Outbox and S3 delivery: one algorithm over a create-if-absent object store.
"""

__all__ = [
    "addresses",
    "build",
    "c2pa_certs",
    "channels",
    "delivery",
    "encode",
    "https_push",
    "original",
    "pdfmeta",
    "provenance",
    "reach",
    "readback",
    "render",
    "s3_access",
    "stamp",
    "store_push",
]
