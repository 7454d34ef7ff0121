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

#: Tilted long words enough to measure a skew by, whatever the level ones say.
_FEW = 3


def rect(word: Word) -> tuple[int, int, int, int]:
    """The upright rectangle around the word's four-point box: (x0, y0, x1, y1)."""
    xs, ys = [p[0] for p in word.box], [p[1] for p in word.box]
    return min(xs), min(ys), max(xs), max(ys)


def top_edge_slope(
    words: Sequence[Word], min_width: Callable[[Word], float], limit: float = math.inf
) -> float:
    """The median dy/dx of the top edges of words wider than ``min_width(word)``, within +-limit.

    Zero when no word is long enough (engines that give upright boxes give zero anyway).
    Where most long words are tilted, the few left exactly level are boxes an engine
    shrank to their ink (``activities.engines.rapid_words.tighten`` does so to a
    short word), which say nothing of the skew: counted, they pulled a 2.8-degree
    page's slope down to 1.8 degrees, and a value pushed to the right margin then
    sat on the line above its label's. So the tilted boxes alone decide wherever there
    are enough of them to (``_FEW``, and a quarter of the long words): on a
    photocopied page tilted 1.9 degrees, 23 of 52 long words' boxes were tilted (median
    slope 0.0325) and the rest shrunk level, and the median of all was 0, so a label's
    value at the right margin stood a line below it.
    """
    slopes = []
    for word in words:
        (ax, ay), (bx, by) = word.box[0][:2], word.box[1][:2]
        if bx - ax > min_width(word):
            slopes.append((by - ay) / (bx - ax))
    tilted = [s for s in slopes if s != 0]
    if len(tilted) >= _FEW and len(tilted) * 4 >= len(slopes):
        slopes = tilted
    if not slopes:
        return 0.0
    return max(-limit, min(limit, statistics.median(slopes)))
