"""OpenTelemetry: one trace from the edge's upload through the workflow to its activities."""

from __future__ import annotations

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from custody import tracing
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.client.submit import wait
from tests.helpers import running_pipeline
from tests.starter.edge.conftest import EdgeHarness, QuickEngine, SettingsFactory, png
from workers.common import connect


async def test_tracing_off_by_default_adds_no_interceptor(settings_for: SettingsFactory) -> None:
    """Without CUSTODY_OTEL the clients carry no tracing interceptor."""
    assert tracing.client_interceptors(settings_for(), "custody-test") == []


async def test_trace_spans_edge_start_workflow_and_activities(
    settings_for: SettingsFactory, tenant: str
) -> None:
    """With CUSTODY_OTEL=1 an upload's trace holds StartWorkflow, the workflow and activity runs."""
    spans = InMemorySpanExporter()
    tracing.install(SimpleSpanProcessor(spans), "custody-test")
    settings = settings_for(otel=True)
    temporal = await connect(settings)  # the workers' own connect: it adds the interceptor
    client = CustodyClient(
        temporal=temporal, store=LocalStore(settings.objects_dir), settings=settings
    )
    edge = EdgeHarness(client)
    auth = {**edge.tenant(tenant), "Content-Type": "image/png"}
    async with running_pipeline(temporal, settings, QuickEngine(), store=client.store) as custody:
        resp = await edge.http.put("/v1/documents", content=png(700), headers=auth)
        assert (await wait(custody, resp.json()["sha256"], tenant=tenant)).state == "published"
    await edge.http.aclose()
    upload = next(s for s in spans.get_finished_spans() if s.name == "custody.upload")
    assert upload.context is not None
    trace_id = upload.context.trace_id
    names = {
        s.name for s in spans.get_finished_spans() if s.context and s.context.trace_id == trace_id
    }
    assert {
        "custody.upload",
        "StartWorkflow:DocumentWorkflow",
        "RunWorkflow:DocumentWorkflow",
        "StartActivity:custody.stage",
        "RunActivity:custody.stage",
        "RunActivity:custody.ocr",
        "RunActivity:custody.publish",
    } <= names
