"""The client callers hold: a Temporal client, the object store and their settings.

Every process connects through :func:`custody.temporal.connect_temporal`, so
the address, namespace, payload encryption, TLS, the API key and tracing are
decided once; the workers share it too, which is why it lives in the core.

    custody = await starter.connect()          # settings from CUSTODY_* variables
    custody = await CustodyClient.connect(settings, service="custody-edge")

How the SDK finds its deployment: the home is ``CUSTODY_HOME`` (or
``Settings(home=...)``), else ``./.custody`` in the folder it runs from; the
keys are ``CUSTODY_KEYS_JSON``, else the folder ``CUSTODY_KEYS_DIR``, else
``HOME/keys``. A home without keys is not a deployment but the wrong folder
(``custody up`` always makes keys), so :func:`find_keys` raises
``ConfigurationError`` before anything is connected or written: a document
submitted there would go unencrypted, under unsigned references the workers
quarantine (``REF_INVALID``), into a store nobody reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowExecutionDescription, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from custody import ids
from custody.errors import ConfigurationError
from custody.keys.keyring import Keyring, keys_dir, load_keyring
from custody.models import DocumentResult
from custody.settings import Settings
from custody.stores import ObjectStore, open_store
from custody.temporal import connect_temporal, tls_config

if TYPE_CHECKING:
    from starter.client.admission import Admission

__all__ = ["CustodyClient", "connect", "connect_temporal", "described", "find_keys", "tls_config"]


@dataclass
class CustodyClient:
    """A Temporal client, the object store and the settings they were built from."""

    temporal: Client
    store: ObjectStore
    settings: Settings

    @classmethod
    async def connect(cls, settings: Settings, *, service: str = "custody-client") -> CustodyClient:
        """Connect to the deployment ``settings`` name; without its keys, touch nothing."""
        find_keys(settings)  # first: the store's folder is not even created without them
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


async def described(handle: WorkflowHandle[Any, Any]) -> WorkflowExecutionDescription | None:
    """The workflow's description, or None where Temporal has none (never started, or
    past retention: the store answers then); any other failure is raised."""
    try:
        return await handle.describe()
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        return None


async def connect(settings: Settings | None = None) -> CustodyClient:
    """The SDK's front door: a client for ``settings``, or for the ``CUSTODY_*`` environment."""
    return await CustodyClient.connect(settings if settings is not None else Settings())


def find_keys(settings: Settings) -> Keyring | None:
    """The deployment's keyring, or ``ConfigurationError`` saying where it was looked for.

    None only for a deployment kept without keys on purpose (``CUSTODY_ALLOW_PLAINTEXT``).
    """
    ring = load_keyring(settings)
    if ring is None and not settings.allow_plaintext:
        raise ConfigurationError(detail=_not_found(settings))
    return ring


def _not_found(settings: Settings) -> str:
    return (
        f"no keys in {keys_dir(settings)}, so {settings.home} is no deployment's home: run "
        "from the folder holding the stack's .custody, or set CUSTODY_HOME to the home "
        "`custody up` printed (or CUSTODY_KEYS_DIR, CUSTODY_KEYS_JSON); nothing was sent"
    )
