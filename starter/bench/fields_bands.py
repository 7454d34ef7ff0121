"""Per field, how often a reading is wrong per confidence band, and the bar that follows.

Every reading a field reader made is judged, not only the ones published: the
bench reads each referral again with its bars at zero
(``activities.fields.unbarred``), so a band below today's bar shows what
lowering it would publish. Band edges are the OCR bench's
(``starter.bench.bands.EDGES``). A field's bar is proposed as the lowest band
edge from which no band holds a single wrong reading: a wrong value published
unreviewed is the failure the product exists to prevent, so no share of
them is tolerated, however small. A band below the top one is opened only on
evidence, ``MIN_READINGS`` readings or more, none wrong: three readings right
say little (with none wrong in n, the wrong share may still be up to 3/n).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from starter.bench.bands import EDGES, count

Judged = tuple[float, bool]  # a reading's confidence, and whether its value was right
MIN_READINGS = 20


def wrong_by_band(judged: Iterable[Judged]) -> list[dict[str, Any]]:
    """One row per band: its edges, its readings, its wrong readings and their share."""
    rows = []
    for (lo, hi), (n, wrong) in zip(
        zip(EDGES, EDGES[1:], strict=False), count(judged), strict=True
    ):
        share = round(wrong / n, 4) if n else None
        rows.append(
            {
                "band": f"{lo:.1f}-{hi:.1f}",
                "lo": lo,
                "hi": hi,
                "readings": n,
                "wrong": wrong,
                "wrong_share": share,
            }
        )
    return rows


def proposed_bar(judged: Sequence[Judged]) -> float | None:
    """The lowest band edge from which no band holds a wrong reading, each band below the
    top one holding ``MIN_READINGS`` or more; 1.0 when even the top band was wrong."""
    if not judged:
        return None
    bar = EDGES[-1]
    bands = list(zip(count(judged), EDGES, strict=False))
    for n, ((readings, wrong), lo) in enumerate(reversed(bands)):
        if wrong or (n and readings < MIN_READINGS):
            break
        bar = lo
    return bar


def wrong_at_or_above(judged: Iterable[Judged], bar: float) -> int:
    """Wrong readings as sure as ``bar`` or surer: what that bar would have published."""
    return sum(1 for confidence, right in judged if confidence >= bar and not right)
