"""``custody bench intake`` on a small burst: the bound holds, nothing is lost, RSS stays flat."""

from __future__ import annotations

import argparse

from starter.bench.intake import _bench


async def test_bench_intake_reports_bound_queue_age_and_memory_side_by_side() -> None:
    """Five places (one taken by the large upload): four small ones accepted, the rest 429."""
    args = argparse.Namespace(
        burst=20, rate=100.0, sources=2, max_waiting=5, big_mb=32, drain=False, slo=900.0
    )
    report = await _bench(args)
    assert (report["accepted_202"], report["rejected_429"], report["other_status"]) == (4, 16, 0)
    assert report["lost"] == 0
    assert report["big_upload_status"] == 202
    assert report["rss_growth_mb"] < 64
    assert 0 < report["max_queue_age_s"] <= report["intake_slo_s"] == 900.0
    assert report["queue_age_within_slo"] is True
    assert report["published_in_run"] == 0  # no workers: nothing can be searchable
