"""Removing, not covering: painted page images and a PDF built afresh from them.

Each removed box is filled black in the page's pixels, and the PDF is a new
document of those images with an invisible text layer of the words kept
(``activities.pages.searchable``). Nothing of the source file is carried
over: no metadata, annotations, attachments, fonts or incremental history,
because none of it is ever read into the new file.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pikepdf

from activities.pages.raster import GrayPage
from activities.pages.searchable import searchable_pdf
from activities.redact.plan import Region
from custody.models import PageText

_INK = 0


def paint(image: GrayPage, regions: Sequence[Region]) -> GrayPage:
    """A copy of ``image`` with every region's box filled, clipped to the page."""
    painted = image.copy()
    height, width = painted.shape
    for region in regions:
        x0, y0, x1, y1 = region.box
        painted[max(0, y0) : min(height, y1), max(0, x0) : min(width, x1)] = _INK
    return painted


def painted_pages(
    images: Iterable[tuple[int, GrayPage]], regions: Sequence[Region]
) -> Iterator[tuple[int, GrayPage]]:
    for index, image in images:
        yield index, paint(image, [r for r in regions if r.page == index])


def build_pdf(pages: Sequence[tuple[GrayPage, PageText]], dpi: int) -> bytes:
    """A fresh PDF of the painted images and the kept words only, without an info dict."""
    built = searchable_pdf(((np.ascontiguousarray(img), text) for img, text in pages), dpi)
    # pdfium stamps a creation date and its name: the view carries no metadata at all.
    with pikepdf.open(io.BytesIO(built)) as pdf:
        if "/Info" in pdf.trailer:
            del pdf.trailer.Info
        out = io.BytesIO()
        pdf.save(out, deterministic_id=True)
    return out.getvalue()
