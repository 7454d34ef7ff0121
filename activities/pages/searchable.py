"""Searchable PDF: the page images with an invisible text layer over each word.

The OCRmyPDF convention: a reader shows the scan exactly as received, and
search, select and copy find the recognised words where they sit on the page.
Each word becomes a text object in render mode 3 (invisible), its font size the
box's height and its horizontal scale stretched to the box's width, so a
highlight covers the word in the image.

Built with pdfium (``pypdfium2.raw``), the library that already rasterises our
PDFs, under the same process-wide lock, because pdfium is not thread-safe.
"""

from __future__ import annotations

import ctypes
import io
from collections.abc import Iterable

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as raw

from activities.pages.raster import PDFIUM_LOCK, GrayPage
from custody.models import PageText, Word

_FONT = b"Helvetica"
_POINTS_PER_INCH = 72.0


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
        for word in text.words:
            _add_word(pdf, page, font, word, scale, height)
        page.gen_content()
    finally:
        page.close()


def _add_word(
    pdf: pdfium.PdfDocument,
    page: pdfium.PdfPage,
    font: object,
    word: Word,
    scale: float,
    page_height: float,
) -> None:
    text = word.text.strip()
    xs = [p[0] for p in word.box]
    ys = [p[1] for p in word.box]
    if not text or max(xs) <= min(xs) or max(ys) <= min(ys):
        return
    box_w = (max(xs) - min(xs)) * scale
    box_h = (max(ys) - min(ys)) * scale
    obj = raw.FPDFPageObj_CreateTextObj(pdf.raw, font, ctypes.c_float(box_h))
    encoded = (text + "\x00").encode("utf-16-le")
    raw.FPDFText_SetText(obj, ctypes.cast(ctypes.c_char_p(encoded), ctypes.POINTER(raw.FPDF_WCHAR)))
    raw.FPDFTextObj_SetTextRenderMode(obj, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
    natural = _width(obj) or box_w
    # PDF's origin is bottom-left; the box's bottom edge sits on the baseline
    # less a descender's worth, close enough for selection to land on the word.
    left = min(xs) * scale
    bottom = page_height - max(ys) * scale + box_h * 0.2
    raw.FPDFPageObj_Transform(obj, box_w / natural, 0, 0, 1, left, bottom)
    raw.FPDFPage_InsertObject(page.raw, obj)


def _width(obj: object) -> float:
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    ok = raw.FPDFPageObj_GetBounds(
        obj, ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top)
    )
    return float(right.value - left.value) if ok else 0.0


def _pil(image: GrayPage) -> object:
    from PIL import Image

    return Image.fromarray(np.ascontiguousarray(image), mode="L")
