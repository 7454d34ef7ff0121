"""The one place Custody connects to Temporal, and the client callers hold.

Workers, the HTTP edge, the CLI and the embedded stack all connect through
:func:`connect_temporal`, so the address, namespace, payload encryption (the
keyring's codec) and tracing are decided once. TLS and API keys belong here
when the settings grow them.

    custody = await starter.connect()          # settings from CUSTODY_* variables
    custody = await CustodyClient.connect(settings, service="custody-edge")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from temporalio.client import Client, Interceptor, WorkflowHandle
from temporalio.runtime import Runtime

from custody import ids
from custody.converter import data_converter
from custody.keys import load_keyring
from custody.models import DocumentResult
from custody.settings import Settings
from custody.stores import ObjectStore, open_store


async def connect_temporal(
    settings: Settings,
    *,
    service: str = "custody-client",
    runtime: Runtime | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Client:
    """A Temporal client for ``service``: sealed payloads, traced when tracing is on.

    ``runtime`` carries a worker's Prometheus endpoint; ``service`` names the
    process in traces.
    """
    chain = list(interceptors)
    if settings.otel:
        # OpenTelemetry's SDK is loaded only by processes that trace.
        from starter.client.tracing import client_interceptors

        chain += client_interceptors(settings, service)
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=data_converter(load_keyring(settings)),
        interceptors=chain,
        runtime=runtime,
    )


@dataclass
class CustodyClient:
    """A Temporal client, the object store and the settings they were built from."""

    temporal: Client
    store: ObjectStore
    settings: Settings

    @classmethod
    async def connect(cls, settings: Settings, *, service: str = "custody-client") -> CustodyClient:
        temporal = await connect_temporal(settings, service=service)
        return cls(temporal=temporal, store=open_store(settings), settings=settings)

    def handle(self, sha256: str, tenant: str | None) -> WorkflowHandle[Any, DocumentResult]:
        """The document's workflow, by its ID: the workflow code is never imported here."""
        return self.temporal.get_workflow_handle(
            ids.workflow_id(sha256, tenant), result_type=DocumentResult
        )


async def connect(settings: Settings | None = None) -> CustodyClient:
    """The SDK's front door: a client for ``settings``, or for the ``CUSTODY_*`` environment."""
    return await CustodyClient.connect(settings if settings is not None else Settings())
