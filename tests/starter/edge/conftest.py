"""Fixtures for the intake edge: settings on fresh task queues, an in-process app, tenants."""

from __future__ import annotations

import io
import random
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from PIL import Image
from temporalio.client import Client

from activities.scratch import StagingArea
from custody.models import PageText
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.edge import tenants
from starter.edge.app import create_app
from starter.edge.scopes import DEFAULT_SCOPES, Scope
from tests.helpers import StandInEngine, make_settings

SettingsFactory = Callable[..., Settings]


def png(seed: int, side: int = 32) -> bytes:
    """A small valid PNG whose bytes differ per seed."""
    rng = random.Random(seed)
    img = Image.new("L", (side, side), 255)
    img.putdata([rng.randrange(256) for _ in range(side * side)])
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


class QuickEngine(StandInEngine):
    """Engine double: answers instantly, so draining needs no real OCR."""

    name, version = "quick", "1"

    def recognise(self, image: np.ndarray, page: int) -> PageText:
        h, w = image.shape[:2]
        return PageText(
            page=page, width=w, height=h, text="ok", words=[], mean_confidence=0.9, seconds=0.0
        )


@pytest.fixture
def settings_for(tmp_path: Path, temporal_address: str) -> SettingsFactory:
    def build(**overrides: Any) -> Settings:
        overrides.setdefault("admission_refresh_s", 0.0)
        return make_settings(tmp_path, temporal_address, **overrides)

    return build


def custody_client(temporal_client: Client, settings: Settings) -> CustodyClient:
    return CustodyClient(
        temporal=temporal_client, store=LocalStore(settings.objects_dir), settings=settings
    )


class EdgeHarness:
    """The edge app over ASGI in this process, plus its client and a tenant's headers."""

    def __init__(self, client: CustodyClient) -> None:
        self.client = client
        self.admission = client.admission  # the SDK's, which submit asks
        self.app = create_app(client)
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://edge"
        )
        self._scraper: dict[str, str] | None = None

    def tenant(
        self, name: str, *, priority: bool = False, scopes: Sequence[Scope] = DEFAULT_SCOPES
    ) -> dict[str, str]:
        """A new tenant's headers, its key with ``scopes`` (upload and read, as ``tenants add``)."""
        _, key = tenants.add(self.client.store, name, priority=priority, scopes=scopes)
        return {"Authorization": f"Bearer {key}"}

    async def scrape(self) -> str:
        """``/metrics`` as a scraper reads it: with a tenant's key of its own."""
        if self._scraper is None:
            self._scraper = self.tenant(f"scraper-{uuid.uuid4().hex[:8]}", scopes=[Scope.ADMIN])
        resp = await self.http.get("/metrics", headers=self._scraper)
        resp.raise_for_status()
        return resp.text

    async def __aenter__(self) -> EdgeHarness:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    def leftovers(self) -> list[str]:
        """Staged upload files and intake objects: both must be empty after a refusal."""
        files = [p.name for p in StagingArea(self.client.settings.staging_path).files()]
        return files + list(self.client.store.list("intake/"))


@pytest.fixture
def edge_for(temporal_client: Client, settings_for: SettingsFactory) -> Callable[..., EdgeHarness]:
    """Build an edge on fresh settings; use it as ``async with edge_for(...) as edge``."""

    def build(**overrides: Any) -> EdgeHarness:
        return EdgeHarness(custody_client(temporal_client, settings_for(**overrides)))

    return build
