"""Page images for OCR: one validated document on disk, one 8-bit page at a time.

Every page leaves here as an HxW ``uint8`` array (Pillow mode ``L``), whatever
it was on disk: EasyOCR crashes on 1-bit fax TIFFs and mis-reads alpha or
16-bit samples, so the normalisation happens once, here, for every format.
Pages are produced lazily and released before the next one, so a 50-page
document never holds more than one page image in memory. ``start`` lets a
retried OCR activity resume after the pages it already stored.

The document is assumed to have passed validation (type, page count, pixel
limits); this module does not re-check intake policy.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pypdfium2 as pdfium
from PIL import Image, ImageOps

PDF = "application/pdf"
# Pillow decodes only the format the validator named, never whatever the
# bytes happen to look like.
_IMAGE_FORMATS: dict[str, list[str]] = {
    "image/png": ["PNG"],
    "image/jpeg": ["JPEG"],
    "image/tiff": ["TIFF"],
    "image/gif": ["GIF"],
    "image/bmp": ["BMP"],
    "image/webp": ["WEBP"],
}
_WHITE = 255
_ALPHA_MODES = frozenset({"RGBA", "LA", "PA", "RGBa", "La"})
_WIDE_INT_MODES = frozenset({"I;16", "I;16L", "I;16B", "I;16N", "I"})

GrayPage = npt.NDArray[np.uint8]

# pdfium is not thread-safe, not even across documents, and OCR activities run
# on a thread pool: every pdfium call here holds this lock (never across a
# yield). Rendering is about 1% of a page's OCR time, so the lock costs little.
# Re-entrant, because an abandoned generator may be closed by the garbage
# collector while its own thread already holds the lock.
PDFIUM_LOCK = threading.RLock()


def count_pages(path: Path, media_type: str) -> int:
    """The number of pages (PDF) or frames (multi-page TIFF, GIF) in the document."""
    if media_type == PDF:
        with PDFIUM_LOCK:
            pdf = pdfium.PdfDocument(path)
            try:
                return len(pdf)
            finally:
                pdf.close()
    with Image.open(path, formats=_formats(media_type)) as image:
        return int(getattr(image, "n_frames", 1))


def iter_pages(
    path: Path, media_type: str, dpi: int, start: int = 0
) -> Iterator[tuple[int, GrayPage]]:
    """Yield ``(page_index, HxW uint8 array)`` for pages ``start`` onwards.

    PDF pages are rendered at ``dpi``; images keep their own pixel size, since
    their resolution is whatever the scanner produced.
    """
    if start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    if media_type == PDF:
        yield from _pdf_pages(path, dpi, start)
    else:
        yield from _image_pages(path, media_type, start)


def _formats(media_type: str) -> list[str]:
    try:
        return _IMAGE_FORMATS[media_type]
    except KeyError:
        raise ValueError(f"no page reader for media type {media_type!r}") from None


def _pdf_pages(path: Path, dpi: int, start: int) -> Iterator[tuple[int, GrayPage]]:
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(path)
        pages = len(pdf)
    try:
        for index in range(start, pages):
            with PDFIUM_LOCK:
                image = render_pdf_page(pdf, index, dpi)
            yield index, image
    finally:
        with PDFIUM_LOCK:
            pdf.close()


def render_pdf_page(pdf: pdfium.PdfDocument, index: int, dpi: int) -> GrayPage:
    page = pdf[index]
    try:
        # Grayscale rendering gives an 8-bit single-channel bitmap directly,
        # a third of the memory of BGR and no colour conversion afterwards.
        bitmap = page.render(scale=dpi / 72, grayscale=True)
        try:
            # to_numpy() is a view into pdfium's buffer: copy before closing.
            return np.array(bitmap.to_numpy(), dtype=np.uint8, copy=True).reshape(
                bitmap.height, bitmap.width
            )
        finally:
            bitmap.close()
    finally:
        page.close()


def _image_pages(path: Path, media_type: str, start: int) -> Iterator[tuple[int, GrayPage]]:
    with Image.open(path, formats=_formats(media_type)) as image:
        frames = int(getattr(image, "n_frames", 1))
        for index in range(start, frames):
            image.seek(index)  # multi-page TIFF: decode only this frame
            yield index, to_gray(image)


def to_gray(image: Image.Image) -> GrayPage:
    """Normalise any Pillow image to an upright 8-bit grayscale array."""
    # Phones and some scanners store JPEGs sideways with an EXIF Orientation
    # tag; OCR must see the page the way a person would. (Pillow applies a
    # TIFF's Orientation itself while loading, so for TIFFs this is a no-op.)
    upright = ImageOps.exif_transpose(image) or image
    return np.array(_to_l(upright), dtype=np.uint8, copy=True)


def _to_l(image: Image.Image) -> Image.Image:
    mode = image.mode
    if mode in ("L", "1", "RGB"):
        return image.convert("L")  # "1" becomes 0/255, not 0/1
    if mode in _ALPHA_MODES or (mode == "P" and "transparency" in image.info):
        return _flatten_on_white(image)
    if mode in _WIDE_INT_MODES:
        return _wide_to_l(np.asarray(image))
    if mode == "F":
        return Image.fromarray(np.clip(np.asarray(image), 0, 255).astype(np.uint8))
    # P, CMYK, YCbCr, LAB, HSV: Pillow knows their colour maths via RGB.
    return image.convert("RGB").convert("L")


def _flatten_on_white(image: Image.Image) -> Image.Image:
    # Transparent pixels often hold black RGB; dropping alpha would turn a
    # transparent background into a black page.
    rgba = image.convert("RGBA")
    background = Image.new("RGBA", rgba.size, (_WHITE, _WHITE, _WHITE, 255))
    background.alpha_composite(rgba)
    return background.convert("L")


def _wide_to_l(samples: npt.NDArray[np.generic]) -> Image.Image:
    # Pillow's own I;16 -> L conversion clips at 255, which turns most 16-bit
    # scans white. Scale by the smallest bit depth that holds the data, so a
    # 12-bit scanner's output in a 16-bit container is not rendered near-black.
    values = samples.astype(np.float64)
    peak = float(values.max(initial=0.0))
    bits = max(8, math.ceil(math.log2(peak + 1))) if peak > 0 else 8
    scaled = np.clip(values, 0, None) * (255.0 / (2**bits - 1))
    return Image.fromarray(np.rint(scaled).astype(np.uint8))
