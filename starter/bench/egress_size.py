"""What a release weighs against its source, and whether it still reads: ``custody bench egress``.

Per released file (the signed PDF exactly as the render activity builds it):

- ``size_ratio``: the released file's bytes over its source's bytes (the
  document as submitted, ``size_bytes`` in its signed record); the report's
  top-level ``size_ratio`` is the same over all files together (total released
  bytes over total source bytes). Mail and fax gateways refuse what grows far
  beyond its scan: the target is at most about 1.5.
- ``readback_ok``: the printed mark read back on every page
  (:func:`activities.egress.readback.read_every_page`) as ``custody egress
  identify`` reads a print-out: confirmed by its check code, or matched to a
  release id the store holds (here, the one released). Top level: every page
  of every file.
- ``legibility``: Tesseract word F1 of each released page's scan (the page as
  pdfium shows it at the OCR resolution, bands cut off) against the source page
  as rasterised for OCR; the diagonal mark crosses the scan, so even a
  lossless release scores below 1. Top level: the mean over pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # the renderer's libraries load only when a bench runs
    from activities.egress.pdfmeta import ReleaseMark

Figures = dict[str, Any]


def measure_file(
    data: bytes, source_bytes: int, images: list[npt.NDArray[np.uint8]], mark: ReleaseMark, dpi: int
) -> Figures:
    """One released PDF's figures; ``images`` are its source pages as rasterised for OCR."""
    from activities.egress.readback import read_every_page

    read = read_every_page(data, [mark.release_id])
    return {
        "source_bytes": source_bytes,
        "released_bytes": len(data),
        "size_ratio": round(len(data) / source_bytes, 3),
        "readback_ok": len(read) == len(images) and all(r == mark.release_id for r in read),
        "legibility": [round(f, 4) for f in _legibility(data, images, mark, dpi)],
    }


def summary(files: dict[str, Figures]) -> Figures:
    """The top-level figures over every file."""
    released = sum(f["released_bytes"] for f in files.values())
    source = sum(f["source_bytes"] for f in files.values())
    pages = [score for f in files.values() for score in f["legibility"]]
    return {
        "size_ratio": round(released / source, 3) if source else None,
        "readback_ok": bool(files) and all(f["readback_ok"] for f in files.values()),
        "legibility": round(sum(pages) / len(pages), 4) if pages else None,
    }


def _legibility(
    data: bytes, images: list[npt.NDArray[np.uint8]], mark: ReleaseMark, dpi: int
) -> list[float]:
    import pypdfium2 as pdfium
    import pytesseract
    from PIL import Image

    from activities.egress.render import content_top
    from activities.pages.raster import PDFIUM_LOCK, render_pdf_page
    from starter.bench.textmetrics import word_f1

    scores = []
    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(data)
        shown = [render_pdf_page(pdf, n, dpi) for n in range(len(pdf))]
        pdf.close()
    for image, page in zip(images, shown, strict=True):
        height, width = image.shape
        top = content_top(mark, dpi, width)
        scan = Image.fromarray(page).crop((0, top, width, top + height))
        released = pytesseract.image_to_string(scan, "eng", timeout=120)
        source = pytesseract.image_to_string(Image.fromarray(image), "eng", timeout=120)
        scores.append(word_f1(released, source))
    return scores
