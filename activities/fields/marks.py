"""Checkboxes on a page image: small square boxes and how much ink is inside each.

Run by the OCR activity on the image it just read (the only place the pixels
are at hand), so consent can be read later from ``PageText.marks`` without
the image. A box is one connected, hollow, near-square blot whose four
sides are inked along most of their length and whose corners are square
(round letters are not); its ink is the dark share of the inside, a margin in
from the border, so a skewed or blurred outline does not count as a mark.
Sizes are relative to the page, so a 100 dpi fax and a 300 dpi scan agree.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from custody.models import Mark

#: Box sides as a share of the page's height: from about 2.3 mm (smaller
#: outlines are letters: o, e, a) to 1.5 cm, whatever the resolution.
MIN_SIDE = 0.009
MAX_SIDE = 0.05
#: Share of each side that must be inked to be an outline, and the margin skipped inside.
SIDE_INKED = 0.7
INNER_MARGIN = 0.22
#: Pages with more candidate boxes than this are tables or noise: no marks are kept.
MAX_MARKS = 200


def find_marks(image: npt.NDArray[np.uint8]) -> list[Mark]:
    """The page's checkboxes, top to bottom; empty when none are seen."""
    import cv2  # opencv is heavy: imported only where a page image is read

    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    _, found = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    ink = np.asarray(found, dtype=np.uint8)
    # Every connected blot's bounding box at C speed; a box's outline is one blot.
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    x, y, w, h, area = (stats[1:, i] for i in range(5))
    low, high = max(8, MIN_SIDE * gray.shape[0]), MAX_SIDE * gray.shape[0]
    sized = (np.minimum(w, h) >= low) & (np.maximum(w, h) <= high)
    square = (w >= 0.75 * h) & (w <= 1.33 * h)
    hollow = area <= 0.85 * w * h  # an outline (a mark may touch it), not a filled blot
    boxes = [
        (int(x[i]), int(y[i]), int(w[i]), int(h[i]))
        for i in np.flatnonzero(sized & square & hollow)
        if _outlined(ink, int(x[i]), int(y[i]), int(w[i]), int(h[i]))
    ]
    if len(boxes) > MAX_MARKS:
        return []
    marks = [Mark(box=[x, y, x + w, y + h], ink=_inside(ink, x, y, w, h)) for x, y, w, h in boxes]
    return sorted(marks, key=lambda m: (m.box[1], m.box[0]))


def _outlined(ink: npt.NDArray[np.uint8], x: int, y: int, w: int, h: int) -> bool:
    band = max(2, min(w, h) // 8)
    region = ink[y : y + h, x : x + w] > 0
    sides = (
        region[:band].any(axis=0),
        region[-band:].any(axis=0),
        region[:, :band].any(axis=1),
        region[:, -band:].any(axis=1),
    )
    # Square corners: a round letter (o, e) leaves its corners blank.
    corners = (
        region[:band, :band],
        region[:band, -band:],
        region[-band:, :band],
        region[-band:, -band:],
    )
    return all(side.mean() >= SIDE_INKED for side in sides) and all(c.any() for c in corners)


def _inside(ink: npt.NDArray[np.uint8], x: int, y: int, w: int, h: int) -> float:
    mx, my = max(2, int(w * INNER_MARGIN)), max(2, int(h * INNER_MARGIN))
    inner = ink[y + my : y + h - my, x + mx : x + w - mx]
    return round(float((inner > 0).mean()), 4) if inner.size else 0.0
