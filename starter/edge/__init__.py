"""The HTTP intake edge (``custody serve``): upload, idempotency, tenants, releases, reads, metrics.

app           The authenticated HTTP intake edge (Starlette on uvicorn; ``custody serve`` runs it).
inflight      Per-tenant caps on uploads in flight at the edge: how many at once, and their bytes.
manual        The manual lane: uploads past the admission bounds, parked for an operator.
metrics       Prometheus metrics of the intake edge, beside admission control's on one registry.
openapi       The OpenAPI 3 description of the intake edge, written by hand and served as is.
preview       ``POST /v1/preview``: one small document read back at once, as evidence of nothing.
preview_lane  The preview lane: the edge's bound on previews at work on the OCR workers.
preview_spec  The preview's part of the OpenAPI document (``starter.edge.openapi``).
preview_work  A preview's round trip to where OCR runs: scratch in, a short workflow, pages out,
              nothing left.
read          The edge's read side: ``GET /v1/documents/{sha256}`` for the caller's tenant only.
releases      The edge's releases: ``POST /v1/releases`` and ``GET /v1/releases/{release_id}``.
review_body   A review decision as the edge receives it: the body's shape, bounds and status codes.
review_html   The review page's HTML: server-rendered, no script, every value escaped.
review_page   The review page: a clerk's way to decide reviews in a browser, served by the edge.
review_spec   The reviews' part of the OpenAPI document (``starter.edge.openapi``).
reviews       The edge's reviews: the tenant's queue, what a reviewer needs, and the decision.
server        The edge's uvicorn: bounded headers in size and in time, short keep-alive.
slo           The intake SLO as the edge sees it: which finished documents became searchable in
              time.
tenants       Tenants and their API keys, kept in the object store.
upload        The edge's upload mechanics: a streamed body to a private file, and idempotency.
"""

__all__ = [
    "app",
    "inflight",
    "manual",
    "metrics",
    "openapi",
    "preview",
    "preview_lane",
    "preview_spec",
    "preview_work",
    "read",
    "releases",
    "review_body",
    "review_html",
    "review_page",
    "review_spec",
    "reviews",
    "server",
    "slo",
    "tenants",
    "upload",
]
