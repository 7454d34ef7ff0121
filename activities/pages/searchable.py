"""Searchable PDF: the page images with an invisible text layer over each word.

The OCRmyPDF convention: a reader shows the scan exactly as received, and
search, select and copy find the recognised words where they sit on the page.
Each word becomes a text object in render mode 3 (invisible), stretched to its
box's width, so a highlight covers the word in the image.

Readers rebuild words and lines from glyph positions, so the layer is written
line by line, from the page's one layout model (``activities.pages.layout``):
every word of a line has the line's font size and sits on the line's
baseline, and every word but a line's last carries a trailing space glyph.
Words placed one by one at their own box heights came out joined in poppler's
``pdftotext`` and MuPDF ("fullcourse", "Dr.Sample": 6 of 109 words of the
two-page discharge example) and a tall box split its line in two.

Built with pdfium (``pypdfium2.raw``), the library that already rasterises our
PDFs, under the same process-wide lock, because pdfium is not thread-safe.
"""

from __future__ import annotations

import ctypes
import io
import statistics
from collections.abc import Iterable

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as raw

from activities.pages.layout import Line, page_lines
from activities.pages.raster import PDFIUM_LOCK, GrayPage
from custody.models import PageText

_FONT = b"Helvetica"
_POINTS_PER_INCH = 72.0
#: The least gap kept between two words of a line, in line heights.
_GAP = 0.25


def searchable_pdf(pages: Iterable[tuple[GrayPage, PageText]], dpi: int) -> bytes:
    """One PDF page per (image, recognised page); ``dpi`` maps pixels to points."""
    scale = _POINTS_PER_INCH / dpi
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument.new()
        try:
            font = raw.FPDFText_LoadStandardFont(pdf.raw, _FONT)
            for image, text in pages:
                _add_page(pdf, font, image, text, scale)
            buffer = io.BytesIO()
            pdf.save(buffer)
            return buffer.getvalue()
        finally:
            pdf.close()


def _add_page(
    pdf: pdfium.PdfDocument, font: object, image: GrayPage, text: PageText, scale: float
) -> None:
    height_px, width_px = image.shape
    width, height = width_px * scale, height_px * scale
    page = pdf.new_page(width, height)
    try:
        picture = pdfium.PdfImage.new(pdf)
        bitmap = pdfium.PdfBitmap.from_pil(_pil(image))
        picture.set_bitmap(bitmap)
        picture.set_matrix(pdfium.PdfMatrix().scale(width, height))
        page.insert_obj(picture)
        for line in page_lines(text):
            _add_line(pdf, page, font, line, scale, height)
        page.gen_content()
    finally:
        page.close()


def _add_line(
    pdf: pdfium.PdfDocument,
    page: pdfium.PdfPage,
    font: object,
    line: Line,
    scale: float,
    page_height: float,
) -> None:
    """The line's words at one font size on one baseline, each but the last with a space.

    The baseline is level, where the line's middle is: on a skewed scan a
    word's highlight sits a little off its ink at the line's ends, but a
    baseline that steps with the skew splits the line for poppler, and glyphs
    turned along it break its words (both measured on 4-degree referrals).
    """
    words = [t for t in line.tokens if t.x1 > t.x0 and t.y1 > t.y0]
    if not words:
        return
    size = statistics.median(t.height for t in words) * scale
    bottom = page_height - line.baseline((words[0].x0 + words[-1].x1) / 2) * scale
    for tok, after in zip(words, [*words[1:], None], strict=True):
        # A word and its space end a little short of the next word: readers merge words
        # closer than a tenth of the font size (poppler), whatever glyph lies between.
        room = None if after is None else (after.x0 - tok.x0) * scale - _GAP * size
        box = (tok.x0 * scale, (tok.x1 - tok.x0) * scale, bottom)
        _add_word(pdf, page, font, tok.text, size, box, room)


def _add_word(
    pdf: pdfium.PdfDocument,
    page: pdfium.PdfPage,
    font: object,
    text: str,
    size: float,
    box: tuple[float, float, float],
    room: float | None,
) -> None:
    """One invisible word over ``box`` (left, width, baseline in points), a space after it
    when ``room`` (points to the next word) is given, squeezed so the two fit in it."""
    left, width, bottom = box
    obj = raw.FPDFPageObj_CreateTextObj(pdf.raw, font, ctypes.c_float(size))
    _set_text(obj, text)
    natural = _width(obj) or width
    stretch = width / natural
    if room is not None:
        _set_text(obj, text + " ")  # a real space: readers need not guess the gap
        spaced = _width(obj) or natural
        stretch = max(0.6 * stretch, min(stretch, room / spaced))
    raw.FPDFTextObj_SetTextRenderMode(obj, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
    raw.FPDFPageObj_Transform(obj, stretch, 0, 0, 1, left, bottom)
    raw.FPDFPage_InsertObject(page.raw, obj)


def _set_text(obj: object, text: str) -> None:
    encoded = (text + "\x00").encode("utf-16-le")
    raw.FPDFText_SetText(obj, ctypes.cast(ctypes.c_char_p(encoded), ctypes.POINTER(raw.FPDF_WCHAR)))


def _width(obj: object) -> float:
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    ok = raw.FPDFPageObj_GetBounds(
        obj, ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top)
    )
    return float(right.value - left.value) if ok else 0.0


def _pil(image: GrayPage) -> object:
    from PIL import Image

    return Image.fromarray(np.ascontiguousarray(image), mode="L")
