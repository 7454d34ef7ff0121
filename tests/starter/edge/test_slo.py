"""The edge's intake-SLO metrics: published documents counted by whether they met the SLO."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client

from starter.client.submit import submit, wait
from tests.helpers import running_pipeline
from tests.starter.edge.conftest import (
    EdgeHarness,
    QuickEngine,
    SettingsFactory,
    custody_client,
    png,
)


def _value(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and labels.items() <= s.labels.items():
                return float(s.value)
    return None


async def _scrape_until(edge: EdgeHarness, name: str, want: float, **labels: str) -> str:
    """Visibility records a close a moment late: scrape until the count arrives (or 60 s)."""
    for _ in range(120):
        text = await edge.scrape()
        if _value(text, name, **labels) == want:
            return text
        await asyncio.sleep(0.5)
    return text


@pytest.mark.parametrize(("slo_s", "within"), [(3600.0, "true"), (0.001, "false")])
async def test_edge_counts_documents_searchable_within_slo(
    temporal_client: Client, settings_for: SettingsFactory, tenant: str, slo_s: float, within: str
) -> None:
    """Published documents are counted once each, as within the SLO or not, with the share."""
    settings = settings_for(intake_slo_s=slo_s)
    edge = EdgeHarness(custody_client(temporal_client, settings))
    name = "custody_documents_searchable_total"
    # The edge counts from here on; the registry is per process, so compare with now.
    before = _value(await edge.scrape(), name, within_slo=within) or 0.0
    async with running_pipeline(temporal_client, settings, QuickEngine()) as custody:
        subs = [await submit(custody, png(600 + i), tenant=tenant) for i in range(3)]
        for sub in subs:
            assert (await wait(custody, sub.sha256, tenant=tenant)).state == "published"
    text = await _scrape_until(edge, name, before + 3, within_slo=within)
    again = await edge.scrape()  # counted once each, however often scraped
    await edge.http.aclose()
    assert _value(text, name, within_slo=within) == before + 3
    assert _value(again, name, within_slo=within) == before + 3
    assert _value(text, "custody_searchable_within_slo_ratio") == (1.0 if within == "true" else 0.0)
    assert _value(text, "custody_intake_slo_seconds") == slo_s
