"""Prometheus metrics of the intake edge, beside admission control's on one registry.

The registry and the admission metrics are the SDK's (``starter.client.metrics``):
admission runs in ``submit``, which the edge calls. Label values are codes and
status numbers only: never tenants' file names, keys or document content, and
never anything a caller chooses freely.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from starter.client.metrics import REGISTRY as REGISTRY

UPLOAD_SECONDS = Histogram(
    "custody_upload_seconds",
    "Time from the first byte of an upload to the edge's answer, by HTTP status",
    ["status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
    registry=REGISTRY,
)
UPLOAD_BYTES = Counter(
    "custody_upload_bytes",
    "Bytes received by the edge in accepted uploads",
    registry=REGISTRY,
)
INTAKE_SLO = Gauge(
    "custody_intake_slo_seconds",
    "The configured accepted-to-searchable target (CUSTODY_INTAKE_SLO_S)",
    registry=REGISTRY,
)
SEARCHABLE = Counter(
    "custody_documents_searchable",
    "Documents published since this edge started, by whether they met the intake SLO",
    ["within_slo"],
    registry=REGISTRY,
)
SLO_SHARE = Gauge(
    "custody_searchable_within_slo_ratio",
    "Share of the documents published since this edge started that met the intake SLO",
    registry=REGISTRY,
)
MANUAL_LANE = Counter(
    "custody_manual_lane",
    "Uploads past the admission bounds parked in the manual lane, by reason code",
    ["reason"],
    registry=REGISTRY,
)
