"""An OCR word's box as the readers of a page's layout use it: its rectangle, the page's slope.

The layout model (``activities.pages.layout``) groups words into lines with
the page's skew taken out; the skew is measured here from the words' own
tilted boxes, the caller saying which words are long enough to trust.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

from custody.models import Word


def rect(word: Word) -> tuple[int, int, int, int]:
    """The upright rectangle around the word's four-point box: (x0, y0, x1, y1)."""
    xs, ys = [p[0] for p in word.box], [p[1] for p in word.box]
    return min(xs), min(ys), max(xs), max(ys)


def top_edge_slope(
    words: Sequence[Word], min_width: Callable[[Word], float], limit: float = math.inf
) -> float:
    """The median dy/dx of the top edges of words wider than ``min_width(word)``, within +-limit.

    Zero when no word is long enough (engines that give upright boxes give zero anyway).
    """
    slopes = []
    for word in words:
        (ax, ay), (bx, by) = word.box[0][:2], word.box[1][:2]
        if bx - ax > min_width(word):
            slopes.append((by - ay) / (bx - ax))
    if not slopes:
        return 0.0
    return max(-limit, min(limit, statistics.median(slopes)))
