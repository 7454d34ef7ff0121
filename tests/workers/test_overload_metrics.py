"""The overload metrics reach the worker's Prometheus endpoint under their documented names."""

from __future__ import annotations

import socket

import httpx
from prometheus_client.parser import text_string_to_metric_families
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from workers.breaker import State
from workers.metrics import HISTOGRAMS, Overload


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_overload_metrics_exported_with_documented_names() -> None:
    """Retry budget and breaker state reach the endpoint as the alert rules name them."""
    port = _free_port()
    runtime = Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(
                bind_address=f"127.0.0.1:{port}",
                counters_total_suffix=True,
                durations_as_seconds=True,
                histogram_bucket_overrides=HISTOGRAMS,
            )
        )
    )
    overload = Overload(runtime.metric_meter)
    overload.budget(7.5, refused="custody.ocr")
    overload.breaker("store", State.OPEN)
    overload.breaker("ocr_engine", State.HALF_OPEN)
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    samples = {  # the runtime's own service_name label aside
        (s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "service_name"))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("custody_retry_budget_remaining", ())] == 7.5
    assert samples[("custody_retry_budget_exhausted_total", (("activity", "custody.ocr"),))] == 1
    assert samples[("custody_breaker_state", (("breaker", "store"),))] == 2
    assert samples[("custody_breaker_state", (("breaker", "ocr_engine"),))] == 1
    assert samples[("custody_breaker_opened_total", (("breaker", "store"),))] == 1
    assert "custody_task_queue_wait_seconds" in HISTOGRAMS
