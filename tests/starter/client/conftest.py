"""The SDK's tests use the edge's fixtures: settings on fresh task queues, tenants, PNGs."""

from tests.starter.edge.conftest import settings_for as settings_for

__all__ = ["settings_for"]
