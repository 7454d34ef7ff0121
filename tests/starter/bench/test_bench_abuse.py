"""``custody bench abuse`` in a short form: the other tenant is served in time, nothing is lost."""

from __future__ import annotations

import argparse

from starter.bench.abuse import B_WITHIN_S, _bench


async def test_bench_abuse_other_tenant_accepted_in_time_and_nothing_lost() -> None:
    """Under slow uploads, a flood and oversized heads, tenant B gets 202 within 2 s."""
    args = argparse.Namespace(seconds=4.0, slow=6, flood=60, big_headers=4)
    report = await _bench(args)
    assert report["b_status"] == 202 and report["b_accept_s"] <= B_WITHIN_S
    assert report["statuses"]["slow"].get(408, 0) >= 1  # trickles were cut off
    assert report["statuses"]["slow"].get(429, 0) >= 1  # past A's in-flight cap
    assert set(report["statuses"]["headers"]) <= {400, 0}
    assert report["lost"] == 0 and report["staging_left"] == 0
    assert report["server_errors"] == 0 and report["rss_growth_mb"] < 256
    assert report["ok"] is True
