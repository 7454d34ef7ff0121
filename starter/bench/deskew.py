"""Deskew a page: find the angle its text lines run at, and turn it back.

Text lines make the row profile of a page's ink spiky when the rows run along
them, and smooth when they cut across. So the skew is the angle whose
projection of the ink onto the vertical axis has the largest sum of squared
row counts (the projection-profile method, as in Postl 1986 and Leptonica's
``pixFindSkew``). The ink points are projected rather than the page rotated,
on a page reduced to at most 1000 px a side: a coarse sweep, then a fine one
around the best, some milliseconds per page.

Pages turned by less than ``min_deg`` are returned untouched: resampling a
straight page only blurs it.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from activities.pages.raster import GrayPage

_SIDE = 1000  # the reduced page's longest side for the search
_MAX_POINTS = 200_000  # ink points projected per angle, sampled evenly beyond this


def estimate_skew(image: GrayPage, limit_deg: float = 6.0) -> float:
    """Counter-clockwise degrees the page's text is turned by, within +-``limit_deg``."""
    ys, xs = _ink(image)
    if len(ys) < 50:
        return 0.0  # blank or nearly: nothing to measure
    coarse = np.arange(-limit_deg, limit_deg + 1e-9, 0.5)
    best = _best(ys, xs, coarse)
    fine = np.arange(best - 0.5, best + 0.5 + 1e-9, 0.05)
    return round(_best(ys, xs, fine), 2)


def deskew(image: GrayPage, min_deg: float = 0.3, limit_deg: float = 6.0) -> tuple[GrayPage, float]:
    """The page turned straight, and the angle it was at (0.0 when left as it was)."""
    angle = estimate_skew(image, limit_deg)
    if abs(angle) < min_deg:
        return image, 0.0
    turned = Image.fromarray(image).rotate(
        -angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255
    )
    return np.asarray(turned, dtype=np.uint8), angle


def _ink(image: GrayPage) -> tuple[np.typing.NDArray[np.float64], np.typing.NDArray[np.float64]]:
    """Coordinates of dark pixels on the reduced page (threshold: halfway to paper)."""
    scale = min(1.0, _SIDE / max(image.shape))
    page = Image.fromarray(image)
    if scale < 1.0:
        size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
        page = page.resize(size, Image.Resampling.BOX)
    pixels = np.asarray(page)
    paper = float(np.percentile(pixels, 90))
    ys, xs = np.nonzero(pixels < paper / 2)
    step = max(1, len(ys) // _MAX_POINTS)
    return ys[::step].astype(np.float64), xs[::step].astype(np.float64)


def _best(
    ys: np.typing.NDArray[np.float64],
    xs: np.typing.NDArray[np.float64],
    angles: np.typing.NDArray[np.float64],
) -> float:
    """The angle whose row profile is spikiest."""
    scores = []
    for angle in angles:
        # A line turned counter-clockwise by a rises to the right: y + x tan(a) is constant on it.
        rows = np.rint(ys + xs * np.tan(np.radians(angle))).astype(np.int64)
        counts = np.bincount(rows - rows.min())
        scores.append(float(np.dot(counts, counts)))
    return float(angles[int(np.argmax(scores))])
