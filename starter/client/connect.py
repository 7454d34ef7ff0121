"""The one place Custody connects to Temporal, and the client callers hold.

Workers, the HTTP edge, the CLI and the embedded stack all connect through
:func:`connect_temporal`, so the address, namespace, payload encryption (the
keyring's codec), TLS, the API key and tracing are decided once. In
production the codec refuses payloads that are not sealed.

    custody = await starter.connect()          # settings from CUSTODY_* variables
    custody = await CustodyClient.connect(settings, service="custody-edge")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from temporalio.client import Client, Interceptor, WorkflowHandle
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from custody import ids
from custody.converter import data_converter
from custody.keys import load_keyring
from custody.models import DocumentResult
from custody.settings import Settings
from custody.stores import ObjectStore, open_store


def tls_config(settings: Settings) -> TLSConfig | None:
    """TLS (mTLS with a client cert and key) from the ``CUSTODY_TEMPORAL_TLS*`` settings.

    None when nothing asks for TLS: the SDK then dials plaintext, or TLS with
    the system roots when an API key is set. The files are read on each call,
    so a rotated certificate is picked up by the next connection.
    """
    ca, cert, key = (
        settings.temporal_tls_ca_file,
        settings.temporal_tls_cert_file,
        settings.temporal_tls_key_file,
    )
    wanted = settings.temporal_tls or settings.temporal_tls_server_name is not None
    if not wanted and ca is None and cert is None:
        return None
    return TLSConfig(
        server_root_ca_cert=ca.read_bytes() if ca else None,
        domain=settings.temporal_tls_server_name,
        client_cert=cert.read_bytes() if cert else None,
        client_private_key=key.read_bytes() if key else None,
    )


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
    api_key = settings.temporal_api_key
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        api_key=api_key.get_secret_value() if api_key else None,
        tls=tls_config(settings),
        data_converter=data_converter(
            load_keyring(settings), require_sealed=settings.env == "production"
        ),
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
