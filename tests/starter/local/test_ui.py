"""``custody ui``: its queries are valid visibility queries on a real server, and safe."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from temporalio.client import Client

from custody.errors import UsageError
from custody.queues import SA_REASON, SA_STATE, SA_TENANT
from custody.settings import Settings
from starter.cli.ui import link, queries


async def test_ui_queries_run_on_the_dev_server(temporal_client: Client, tmp_path: Path) -> None:
    """Every query the links carry is accepted by Temporal's visibility store."""
    found = queries(Settings(home=tmp_path), "clinic-a", "PAGE_LIMIT")
    assert set(found) == {
        "quarantined",
        "rejected",
        "oldest_running",
        "releases_failed",
        "by_tenant",
        "by_code",
    }
    assert SA_STATE in found["quarantined"] and SA_TENANT in found["by_tenant"]
    assert SA_REASON in found["by_code"]
    for query in found.values():
        async for _ in temporal_client.list_workflows(query, limit=1):
            break  # reaching here or finding none both mean the query parsed


def test_ui_link_carries_the_query_and_namespace() -> None:
    """The link's query string decodes back to the query, under the namespace's path."""
    query = "CustodyState = 'quarantined'"
    url = urlsplit(link("http://localhost:8233/", "custody", query))
    assert url.path == "/namespaces/custody/workflows"
    assert parse_qs(url.query)["query"] == [query]


def test_ui_refuses_values_that_could_close_the_quotes(tmp_path: Path) -> None:
    """A code or tenant outside their patterns is a usage error, never part of a query."""
    with pytest.raises(UsageError):
        queries(Settings(home=tmp_path), None, "X' OR 'a'='a")
    with pytest.raises(UsageError):
        queries(Settings(home=tmp_path), "a' OR '1", None)
