"""Page rendering inside the locked-down child: untrusted bytes in, raw gray bitmaps out.

pdfium's image decoders (JBIG2, JPX, CCITT) and Pillow's meet hostile bytes
here, in a child with no network, no files and no keys, never in the OCR worker.
Each page crosses the verdict pipe as one frame, a fixed header then its pixels:

    !iII  page index, width, height     then width*height bytes, 8-bit gray
    !iII  page index, 0, length         then a text layer: ``PageText`` JSON

Layer frames come only for a ``layers`` order (``activities.pages.textlayer``:
a born-digital PDF page's words and boxes, parsed here rather than in the
worker); its other pages come as bitmaps. An index of -1 ends the pages;
the child's JSON verdict line follows it. The pipe's own back-pressure keeps
one page in flight: the child blocks on its write until the worker has read
the previous page.
"""

from __future__ import annotations

import io
import os
import struct
from collections.abc import Iterator

import pypdfium2 as pdfium
from PIL import Image

from activities.inspect.inspection import _PILLOW_FORMAT
from activities.pages.raster import PDF, GrayPage, render_pdf_page, to_gray
from activities.pages.textlayer import page_layer
from custody.errors import Code, DocumentRejected
from custody.models import PageText

FRAME = struct.Struct("!iII")
END = -1
MAX_LAYER_BYTES = 16 * 1024 * 1024  # one page's words and boxes, as JSON


def page_budget(max_page_pixels: int, ocr_dpi: int, dpi: int) -> int:
    """The most pixels one page may have at ``dpi``, given the policy's limit at ``ocr_dpi``."""
    return int(max_page_pixels * max(1.0, (dpi / ocr_dpi) ** 2))


def send_pages(
    fd: int, data: bytes, media_type: str, dpi: int, start: int, budget: int, layers: bool = False
) -> dict[str, object]:
    """Write every page from ``start`` as a frame to ``fd``, then the end frame; the verdict.

    With ``layers``, a PDF page with a text layer goes as that layer, not as a bitmap.
    """
    try:
        for index, page in _pages(data, media_type, dpi, start, budget, layers):
            _write(fd, _frame(index, page))
        return {"ok": True}
    except DocumentRejected as exc:
        return {"code": exc.code.value, "detail": exc.detail}
    except MemoryError:
        return {"code": Code.DECODE_LIMIT.value, "detail": "memory limit"}
    except pdfium.PdfiumError:  # the same bytes fail the same way: no retry helps
        return {"code": Code.CORRUPT.value, "detail": "pdfium could not load the document"}
    except Exception as exc:
        return {"error": type(exc).__name__}  # only the type: its message could quote the page
    finally:
        _write(fd, FRAME.pack(END, 0, 0))


def _frame(index: int, page: GrayPage | PageText) -> bytes:
    if isinstance(page, PageText):
        layer = page.model_dump_json().encode()
        if len(layer) > MAX_LAYER_BYTES:
            raise DocumentRejected(Code.DECODE_LIMIT, f"text layer {len(layer)} bytes")
        return FRAME.pack(index, 0, len(layer)) + layer
    height, width = page.shape
    return FRAME.pack(index, width, height) + page.tobytes()


def _pages(
    data: bytes, media_type: str, dpi: int, start: int, budget: int, layers: bool
) -> Iterator[tuple[int, GrayPage | PageText]]:
    if media_type == PDF:
        pdf = pdfium.PdfDocument(data)
        try:
            for index in range(start, len(pdf)):
                width, height = pdf.get_page_size(index)
                _within(int(width * dpi / 72) * int(height * dpi / 72), budget)
                layer = page_layer(pdf, index, dpi) if layers else None
                yield index, layer if layer is not None else render_pdf_page(pdf, index, dpi)
        finally:
            pdf.close()
        return
    with Image.open(io.BytesIO(data), formats=[_PILLOW_FORMAT[media_type]]) as image:
        for index in range(start, int(getattr(image, "n_frames", 1))):
            image.seek(index)
            _within(image.size[0] * image.size[1], budget)
            yield index, to_gray(image)


def _within(pixels: int, budget: int) -> None:
    if pixels > budget:
        raise DocumentRejected(Code.PIXEL_LIMIT, f"page {pixels} px > {budget}")


def _write(fd: int, frame: bytes) -> None:
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]
