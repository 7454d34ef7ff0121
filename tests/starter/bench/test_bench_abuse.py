"""``custody bench abuse`` in a short form: the other tenant is served, nothing is lost.

How soon B is served is the bench's figure (``b_accept_s``, its target ``B_WITHIN_S``,
folded into ``ok``), read from ``custody bench abuse`` on a quiet box, never asserted
here: a shared box's load decides a wall-clock bound.
"""

from __future__ import annotations

import argparse

from starter.bench.abuse import _bench


async def test_bench_abuse_other_tenant_accepted_and_nothing_lost() -> None:
    """Under slow uploads, a flood and oversized heads, tenant B still gets its 202."""
    args = argparse.Namespace(seconds=4.0, slow=6, flood=60, big_headers=4)
    report = await _bench(args)
    assert report["b_status"] == 202 and report["b_accept_s"] > 0
    assert report["statuses"]["slow"].get(408, 0) >= 1  # trickles were cut off
    assert report["statuses"]["slow"].get(429, 0) >= 1  # past A's in-flight cap
    assert set(report["statuses"]["headers"]) <= {400, 0}
    assert report["lost"] == 0 and report["staging_left"] == 0
    assert report["server_errors"] == 0 and report["rss_growth_mb"] < 256
    assert isinstance(report["ok"], bool)
