"""Prometheus metrics of admission control, on the registry the edge's ``/metrics`` serves.

The registry is the SDK's because admission is (``starter.client.admission``):
every submission passes it, and the edge adds its own metrics to the same
registry (``starter.edge.metrics``). One registry of its own, not the global
default, so a process that embeds the edge in tests or benches does not
collide with other collectors. Label values are codes only.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = [
    "ADMISSION_PAUSED",
    "ADMISSION_REJECTIONS",
    "BYTES_WAITING",
    "DOCUMENTS_WAITING",
    "DRAIN_RATE",
    "QUEUE_AGE",
    "REGISTRY",
]

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
