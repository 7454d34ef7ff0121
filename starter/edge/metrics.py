"""Prometheus metrics of the intake edge and admission control.

One registry of its own (not the global default), so a process that embeds
the edge in tests or benches does not collide with other collectors. Label
values are codes and status numbers only: never tenants' file names, keys or
document content, and never anything a caller chooses freely.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

ADMISSION_REJECTIONS = Counter(
    "custody_admission_rejections",
    "Submissions refused by admission control, by reason code",
    ["reason"],
    registry=REGISTRY,
)
DOCUMENTS_WAITING = Gauge(
    "custody_documents_waiting",
    "Documents accepted and not yet through OCR (accepted, staged, validated)",
    registry=REGISTRY,
)
BYTES_WAITING = Gauge(
    "custody_bytes_waiting",
    "Bytes of the documents waiting",
    registry=REGISTRY,
)
QUEUE_AGE = Gauge(
    "custody_queue_age_seconds",
    "Age of the oldest waiting document",
    registry=REGISTRY,
)
DRAIN_RATE = Gauge(
    "custody_drain_rate_per_second",
    "Measured rate at which documents leave the waiting set",
    registry=REGISTRY,
)
ADMISSION_PAUSED = Gauge(
    "custody_admission_paused",
    "1 while an operator has paused admission",
    registry=REGISTRY,
)
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
