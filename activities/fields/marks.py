"""Checkboxes on a page image: small square boxes and how much ink is inside each.

Run by the OCR activity on the image it just read (the only place the pixels
are at hand), so consent can be read later from ``PageText.marks`` without
the image. A box is a near-square outline inside one connected blot: four
sides inked along most of their length, square corners (round letters have
none). The sides are found inside the blot, so a tick overshooting the box,
a cross touching its border or a box filled in solid still gives the box as
printed. Its ink is the dark share of the inside, a margin in from the
border, so a skewed or blurred outline does not count as a mark. Sizes are
relative to the page, so a 100 dpi fax and a 300 dpi scan agree.
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
#: Share of a blot's height (width) a column (row) must be inked to be a side of the box.
EDGE = 0.6
#: How much taller or wider than a box its blot may be: a tick's overshoot.
OVERSHOOT = 1.5


def find_marks(image: npt.NDArray[np.uint8]) -> list[Mark]:
    """The page's checkboxes, top to bottom; empty when none are seen."""
    import cv2  # opencv is heavy: imported only where a page image is read

    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    _, found = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    ink = np.asarray(found, dtype=np.uint8)
    # Every connected blot's bounding box at C speed; a box's outline is one blot.
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    x, y, w, h = (stats[1:, i] for i in range(4))
    low, high = max(8, MIN_SIDE * gray.shape[0]), MAX_SIDE * gray.shape[0]
    # A tick may overshoot its box: the blot may be half as tall or wide again.
    sized = (np.minimum(w, h) >= low) & (np.maximum(w, h) <= OVERSHOOT * high)
    boxes = [
        box
        for i in np.flatnonzero(sized)
        if (box := _box(ink, int(x[i]), int(y[i]), int(w[i]), int(h[i]), low, high)) is not None
    ]
    # A box filled in solid, clear of its border, is a second square inside the first.
    boxes = [b for b in boxes if not any(o != b and _within(b, o) for o in boxes)]
    if len(boxes) > MAX_MARKS:
        return []
    marks = [Mark(box=[x, y, x + w, y + h], ink=_inside(ink, x, y, w, h)) for x, y, w, h in boxes]
    return sorted(marks, key=lambda m: (m.box[1], m.box[0]))


def _box(
    ink: npt.NDArray[np.uint8], x: int, y: int, w: int, h: int, low: float, high: float
) -> tuple[int, int, int, int] | None:
    """The square outline inside a blot, found by its four inked sides, or None.

    The sides are the outermost rows and columns inked along most of the
    blot, so a tick that overshoots the top or a cross that touches the
    border leaves the box where it is printed.
    """
    region = ink[y : y + h, x : x + w] > 0
    cols, rows = (
        np.flatnonzero(region.mean(axis=0) >= EDGE),
        np.flatnonzero(region.mean(axis=1) >= EDGE),
    )
    if cols.size < 2 or rows.size < 2:
        return None
    left, right, top, bottom = int(cols[0]), int(cols[-1]) + 1, int(rows[0]), int(rows[-1]) + 1
    bw, bh = right - left, bottom - top
    if not (low <= min(bw, bh) and max(bw, bh) <= high and 0.75 * bh <= bw <= 1.33 * bh):
        return None
    # A tick overshoots a box on a side or two; a round letter spills past all four.
    spill = max(2, 0.1 * min(bw, bh))
    if sum(d > spill for d in (left, top, w - right, h - bottom)) > 2:
        return None
    box = (x + left, y + top, bw, bh)
    return box if _outlined(ink, *box) else None


def _within(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    (x, y, w, h), (ox, oy, ow, oh) = inner, outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


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
