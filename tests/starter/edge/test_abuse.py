"""The edge under abuse: hostile integer headers, borrowed or rotated source ids, open metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from custody.errors import Code
from custody.settings import Settings
from starter.edge.openapi import SPEC
from starter.edge.scopes import Scope
from starter.edge.upload import UploadError, read_options
from tests.starter.edge.conftest import EdgeHarness, png

EdgeFactory = Callable[..., EdgeHarness]
PNG = {"Content-Type": "image/png"}


# Headers reach the app as latin-1: b"\xb2" is "²", which str.isdigit() passes
# and int() refuses; 5000 digits are more than int() parses at all.
@pytest.mark.parametrize("page_count", [b"\xb2", b"1" * 5000, b"-1", b" 3", b""])
async def test_edge_non_ascii_integer_header_is_400_bad_header(
    edge_for: EdgeFactory, tenant: str, page_count: bytes
) -> None:
    """A Custody-Page-Count that is not plain ASCII digits answers 400 BAD_HEADER, not a 500."""
    async with edge_for() as edge:
        headers: dict[str, Any] = {**edge.tenant(tenant), **PNG, "Custody-Page-Count": page_count}
        resp = await edge.http.put("/v1/documents", content=png(700), headers=headers)
        assert edge.leftovers() == []
    assert (resp.status_code, resp.json()["error"]) == (400, "BAD_HEADER")


def test_read_options_refuses_unicode_digits_int_would_accept(settings_for: Any) -> None:
    """Arabic-Indic "٣", which int() reads as 3, is refused like any non-ASCII digit."""
    settings: Settings = settings_for()
    with pytest.raises(UploadError) as refused:
        read_options({"content-type": "image/png", "custody-page-count": "٣"}, settings)
    assert (refused.value.status, refused.value.code) == (400, Code.BAD_HEADER)


async def test_edge_source_bucket_is_not_shared_across_tenants(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """Tenant A sending clinic-b's source id drains only its own bucket, never clinic-b's."""
    async with edge_for(admission_source_burst=2, admission_source_rate=0.01) as edge:
        mallory = {**edge.tenant(tenant), **PNG, "Custody-Source-Id": "clinic-b"}
        clinic = {**edge.tenant(f"{tenant}-b"), **PNG, "Custody-Source-Id": "clinic-b"}
        drained = [
            (await edge.http.put("/v1/documents", content=png(710 + i), headers=mallory))
            for i in range(3)
        ]
        own = await edge.http.put("/v1/documents", content=png(720), headers=clinic)
    assert [r.status_code for r in drained] == [202, 202, 429]
    assert drained[2].json()["error"] == "ADMISSION_SOURCE_RATE"
    assert own.status_code == 202


async def test_edge_rotating_source_ids_hit_the_tenant_rate(
    edge_for: EdgeFactory, tenant: str
) -> None:
    """A fresh source id per upload still meets the tenant's bucket; other tenants go on."""
    async with edge_for(admission_tenant_burst=3, admission_tenant_rate=0.01) as edge:
        auth = {**edge.tenant(tenant), **PNG}
        answers = [
            await edge.http.put(
                "/v1/documents",
                content=png(730 + i),
                headers={**auth, "Custody-Source-Id": f"rotated-{i}"},
            )
            for i in range(5)
        ]
        other = await edge.http.put(
            "/v1/documents", content=png(740), headers={**edge.tenant(f"{tenant}-o"), **PNG}
        )
        scrape = await edge.scrape()
    assert [r.status_code for r in answers] == [202] * 3 + [429] * 2
    assert {r.json()["error"] for r in answers[3:]} == {"ADMISSION_TENANT_RATE"}
    assert all(int(r.headers["retry-after"]) >= 1 for r in answers[3:])
    assert other.status_code == 202
    assert 'custody_admission_rejections_total{reason="tenant_rate"}' in scrape


async def test_edge_metrics_requires_an_api_key(edge_for: EdgeFactory, tenant: str) -> None:
    """/metrics answers 401 without a valid bearer key, 403 to a key without the admin
    scope and 200 with it; the spec says so."""
    async with edge_for() as edge:
        bare = await edge.http.get("/metrics")
        wrong = await edge.http.get("/metrics", headers={"Authorization": "Bearer nope"})
        scanner = await edge.http.get("/metrics", headers=edge.tenant(tenant))
        admin = edge.tenant(f"{tenant}-ops", scopes=[Scope.ADMIN])
        keyed = await edge.http.get("/metrics", headers=admin)
        spec = await edge.http.get("/openapi.json")
    assert (bare.status_code, bare.json()["error"]) == (401, "UNAUTHENTICATED")
    assert (wrong.status_code, wrong.json()["error"]) == (401, "UNAUTHENTICATED")
    assert (scanner.status_code, scanner.json()["error"]) == (403, "SCOPE_DENIED")
    assert keyed.status_code == 200 and "custody_documents_waiting" in keyed.text
    assert spec.status_code == 200  # public on purpose: see starter.edge.app
    assert SPEC["paths"]["/metrics"]["get"]["security"] == [{"apiKey": []}]


async def test_edge_metrics_scrapes_query_visibility_once_per_refresh(
    edge_for: EdgeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scrapes within admission_refresh_s run no new Temporal visibility query."""
    async with edge_for(admission_refresh_s=3600.0) as edge:
        temporal = edge.client.temporal
        real, queries = temporal.list_workflows, []

        # A counting pass-through, not a stand-in: the real query still runs.
        def counted(*args: Any, **kwargs: Any) -> Any:
            queries.append(args[0] if args else kwargs.get("query"))
            return real(*args, **kwargs)

        monkeypatch.setattr(temporal, "list_workflows", counted)
        await edge.scrape()
        first = len(queries)
        for _ in range(3):
            await edge.scrape()
    assert first == 2  # one for admission, one for the SLO tracker
    assert len(queries) == first
