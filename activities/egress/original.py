"""What a source page's own pixels were, where its raster no longer shows it: PDF scans.

A PDF page is rasterised at the OCR resolution whatever its scan's own: a
100 dpi scan drawn at 200 dpi has four times the pixels and none of them new,
and a 1-bit fax image comes out with grey edges. A page counts as a scan when
one image covers at least half of it and nothing else is drawn on it (an OCR
layer's invisible text aside: vector text over a low-resolution background
must not be brought down to the background's resolution); its resolution is
that image's (the larger of its two axes) and it is bilevel when the image is
1 bit deep.
Image sources say it themselves: their pixels are kept as decoded, and a
bilevel one decodes to pure black and white.

pdfium opens a submitted file only in the locked-down child: the worker asks
for :func:`originals` through ``activities.inspect.sandboxed.originals_sandboxed``
(an ``originals`` order), and checks the answer as :class:`Original`.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as raw
from pydantic import BaseModel, ConfigDict, Field

from activities.pages.raster import PDF, PDFIUM_LOCK

_COVERS = 0.5  # of the page's area, for an image to be the page's scan


class Original(BaseModel):
    """One source page's scan: its resolution (None: not a scan) and whether it is 1 bit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dpi: float | None = Field(default=None, gt=0, le=10_000)
    bilevel: bool = False

    def scale(self, dpi: int) -> float:
        """The factor that brings a page rasterised at ``dpi`` back to the scan's resolution."""
        return 1.0 if self.dpi is None or self.dpi >= dpi else self.dpi / dpi


def originals(path: Path | bytes, media_type: str) -> list[Original]:
    """Each page's :class:`Original`; empty for an image source (its pixels are its own).
    Call it in the sandboxed child only (it opens the file with pdfium)."""
    if media_type != PDF:
        return []
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(path)
        try:
            return [_page(pdf, index) for index in range(len(pdf))]
        finally:
            pdf.close()


def _page(pdf: pdfium.PdfDocument, index: int) -> Original:
    page = pdf[index]
    try:
        width, height = page.get_size()
        scans = []
        for obj in page.get_objects(max_depth=2):
            if obj.type == raw.FPDF_PAGEOBJ_IMAGE:
                left, bottom, right, top = obj.get_bounds()
                if (right - left) * (top - bottom) >= _COVERS * width * height:
                    meta = obj.get_metadata()
                    scans.append((max(meta.horizontal_dpi, meta.vertical_dpi), meta.bits_per_pixel))
            elif _visible(obj):
                return Original()  # born-digital text or drawing: rasterised at the OCR dpi
    finally:
        page.close()
    if not scans:
        return Original()
    dpi, bits = max(scans)
    return Original(dpi=float(dpi) if dpi > 0 else None, bilevel=bits == 1)


def _visible(obj: pdfium.PdfObject) -> bool:
    """A drawn object other than an image; a scan's invisible OCR text (mode 3) is not."""
    kind = int(obj.type)
    if kind == raw.FPDF_PAGEOBJ_TEXT:
        mode = int(raw.FPDFTextObj_GetTextRenderMode(obj.raw))
        return bool(mode != raw.FPDF_TEXTRENDERMODE_INVISIBLE)
    return bool(kind != raw.FPDF_PAGEOBJ_FORM)  # a form's own objects are walked too
