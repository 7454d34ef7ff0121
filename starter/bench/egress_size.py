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
  as rasterised for OCR; ``legibility_lossless``: the same for that page stored
  as releases were before (8-bit, at the OCR resolution). The diagonal mark
  crosses the scan, so even a lossless page scores below 1, and Tesseract's
  reading swings with where the mark's glyphs fall (0.37 to 0.70 on one FUNSD
  form across four release ids): compare the two, not either with 1. Top
  level: the means over pages.
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
    scores = [_legibility(data, n, image, mark, dpi) for n, image in enumerate(images)]
    return {
        "source_bytes": source_bytes,
        "released_bytes": len(data),
        "size_ratio": round(len(data) / source_bytes, 3),
        "readback_ok": len(read) == len(images) and all(r == mark.release_id for r in read),
        "legibility": [round(released, 4) for released, _ in scores],
        "legibility_lossless": [round(lossless, 4) for _, lossless in scores],
    }


def summary(files: dict[str, Figures]) -> Figures:
    """The top-level figures over every file."""
    released = sum(f["released_bytes"] for f in files.values())
    source = sum(f["source_bytes"] for f in files.values())
    return {
        "size_ratio": round(released / source, 3) if source else None,
        "readback_ok": bool(files) and all(f["readback_ok"] for f in files.values()),
        "legibility": _mean(files, "legibility"),
        "legibility_lossless": _mean(files, "legibility_lossless"),
    }


def _mean(files: dict[str, Figures], key: str) -> float | None:
    pages = [score for f in files.values() for score in f[key]]
    return round(sum(pages) / len(pages), 4) if pages else None


def _legibility(
    data: bytes, index: int, image: npt.NDArray[np.uint8], mark: ReleaseMark, dpi: int
) -> tuple[float, float]:
    """Word F1 against the source page of page ``index`` as released, and as stored losslessly."""
    import pytesseract
    from PIL import Image

    from activities.egress.stamp import Stamp
    from activities.pages.searchable import searchable_pdf
    from custody.models import PageText
    from starter.bench.textmetrics import word_f1

    height, width = image.shape
    blank = PageText(
        page=0, width=width, height=height, text="", words=[], mean_confidence=0, seconds=0
    )
    stamped, _ = Stamp(mark, dpi).page(image, blank, index + 1)
    lossless = searchable_pdf([(np.asarray(stamped), blank)], dpi)
    source = pytesseract.image_to_string(Image.fromarray(image), "eng", timeout=120)
    read = [
        pytesseract.image_to_string(_scan(pdf, n, mark, dpi, image.shape), "eng", timeout=120)
        for pdf, n in ((data, index), (lossless, 0))
    ]
    return word_f1(read[0], source), word_f1(read[1], source)


def _scan(data: bytes, index: int, mark: ReleaseMark, dpi: int, shape: tuple[int, ...]) -> Any:
    """Page ``index`` of a PDF as pdfium shows it at ``dpi``, the bands cut off."""
    import pypdfium2 as pdfium
    from PIL import Image

    from activities.egress.render import content_top
    from activities.pages.raster import PDFIUM_LOCK, render_pdf_page

    with PDFIUM_LOCK:
        pdf = pdfium.PdfDocument(data)
        try:
            page = render_pdf_page(pdf, index, dpi)
        finally:
            pdf.close()
    height, width = shape
    top = content_top(mark, dpi, width)
    return Image.fromarray(page).crop((0, top, width, top + height))
