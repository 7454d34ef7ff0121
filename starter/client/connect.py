"""The client callers hold: a Temporal client, the object store and their settings.

Every process connects through :func:`custody.temporal.connect_temporal`, so
the address, namespace, payload encryption, TLS, the API key and tracing are
decided once; the workers share it too, which is why it lives in the core.

    custody = await starter.connect()          # settings from CUSTODY_* variables
    custody = await CustodyClient.connect(settings, service="custody-edge")
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowHandle

from custody import ids
from custody.models import DocumentResult
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from custody.temporal import connect_temporal, tls_config

if TYPE_CHECKING:
    from starter.client.admission import Admission

__all__ = ["CustodyClient", "connect", "connect_temporal", "tls_config"]


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

    @cached_property
    def admission(self) -> Admission:
        """This client's admission controller, which every ``submit`` through it asks."""
        # Here, not at the top: store-only commands build no controller and load no metrics.
        from starter.client.admission import Admission

        return Admission(self)

    def handle(self, sha256: str, tenant: str | None) -> WorkflowHandle[Any, DocumentResult]:
        """The document's workflow, by its ID: the workflow code is never imported here."""
        return self.temporal.get_workflow_handle(
            ids.workflow_id(sha256, tenant), result_type=DocumentResult
        )


async def connect(settings: Settings | None = None) -> CustodyClient:
    """The SDK's front door: a client for ``settings``, or for the ``CUSTODY_*`` environment."""
    return await CustodyClient.connect(settings if settings is not None else Settings())
