"""OpenTelemetry tracing across the edge, the workflow and its activities (off by default).

``CUSTODY_OTEL=1`` adds the SDK's :class:`TracingInterceptor` to every Temporal
client Custody connects (``starter.client.connect``: the edge's, each
worker's), and a worker takes it from its client, so one trace runs from
the edge's ``StartWorkflow`` through the workflow to each activity attempt.
Spans go to ``CUSTODY_OTEL_ENDPOINT`` over OTLP/HTTP when it is set (that
needs ``opentelemetry-exporter-otlp-proto-http``), else to stderr. Span
attributes are the SDK's: workflow and run IDs (hashes), never content.
"""

from __future__ import annotations

import sys

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from temporalio.client import Interceptor
from temporalio.contrib.opentelemetry import TracingInterceptor

from custody.errors import ConfigurationError
from custody.settings import Settings

_configured: list[TracerProvider] = []


def client_interceptors(settings: Settings, service: str) -> list[Interceptor]:
    """The interceptors a Temporal client of ``service`` should carry: tracing or none."""
    if not settings.otel:
        return []
    if not _configured:
        install(_exporter(settings), service)
    return [TracingInterceptor()]


def install(exporter: SpanExporter | SpanProcessor, service: str) -> TracerProvider:
    """Send spans to ``exporter`` from the process's provider, made global on first use.

    OpenTelemetry lets a process set its global provider once, so a second
    call adds its exporter to the provider already installed.
    """
    if _configured:
        provider = _configured[0]
    else:
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        trace.set_tracer_provider(provider)
        _configured.append(provider)
    if isinstance(exporter, SpanProcessor):
        provider.add_span_processor(exporter)
    else:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _exporter(settings: Settings) -> SpanExporter:
    if settings.otel_endpoint is None:
        return ConsoleSpanExporter(out=sys.stderr)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as err:
        raise ConfigurationError(
            detail="CUSTODY_OTEL_ENDPOINT needs opentelemetry-exporter-otlp-proto-http"
        ) from err
    exporter: SpanExporter = OTLPSpanExporter(endpoint=settings.otel_endpoint)
    return exporter
