"""The one connection to Temporal every process makes: workers, the edge, the CLI, the SDK.

The address, namespace, payload encryption (the keyring's codec), TLS, the API
key and tracing are decided here once. In production the codec refuses
payloads that are not sealed, and plaintext gRPC is refused: without TLS
settings or an API key (which turns TLS on) ``connect_temporal`` raises
``ConfigurationError`` before it dials. The SDK's face is ``starter.client.connect``.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import Client, Interceptor
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from custody.converter import data_converter
from custody.errors import ConfigurationError
from custody.keys.keyring import load_keyring
from custody.settings import Settings


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
        from custody.tracing import client_interceptors

        chain += client_interceptors(settings, service)
    api_key = settings.temporal_api_key
    tls = tls_config(settings)
    if settings.env == "production" and tls is None and api_key is None:
        raise ConfigurationError(
            detail="production refuses plaintext to Temporal: set CUSTODY_TEMPORAL_TLS "
            "(with its CA, client certificate and key) or CUSTODY_TEMPORAL_API_KEY"
        )
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        api_key=api_key.get_secret_value() if api_key else None,
        tls=tls,
        data_converter=data_converter(
            load_keyring(settings), require_sealed=settings.env == "production"
        ),
        interceptors=chain,
        runtime=runtime,
    )
