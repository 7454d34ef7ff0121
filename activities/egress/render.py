"""The released file: each verified page with the release burned into its pixels.

A released page is the source page with the mark drawn on (:mod:`.stamp`: a
band above and below with the release id and check code, a light diagonal
across the scan). The OCR words stay findable through an invisible text layer
(:func:`activities.pages.searchable.searchable_pdf`), and the PDF carries its
identity in ``/ID``, XMP and info dict (:mod:`.pdfmeta`). Each page is built
on its own and its image stored as its source was (1 bit, or 16 grey levels
that round a pixel by at most half a step, at the scan's own resolution:
:mod:`.encode`) before the pages are joined, so a release stays near its
source's size and one raw page is held at a time.

Deterministic: the same pages, dpi and mark give the same bytes on one
installation (the date comes in the mark, the fonts from the system).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

import numpy as np
import pikepdf
import pypdfium2 as pdfium
from PIL import PngImagePlugin

from activities.egress import encode
from activities.egress.original import Original
from activities.egress.pdfmeta import ReleaseMark, write_identity
from activities.egress.stamp import Stamp
from activities.pages.raster import GrayPage
from activities.pages.searchable import searchable_pdf
from custody.errors import RenderFailed
from custody.models import PageText


def render_release(
    pages: Iterable[tuple[GrayPage, PageText]],
    dpi: int,
    mark: ReleaseMark,
    originals: Sequence[Original] = (),
) -> bytes:
    """A PDF of the watermarked pages with their invisible OCR text and the release identity.

    ``originals`` says, page by page, what a PDF source's scan was (:mod:`.original`);
    pages past its end, and image sources, keep the pixels they come with.
    """
    stamp = Stamp(mark, dpi)
    singles: list[pikepdf.Pdf] = []
    try:
        with pikepdf.new() as pdf:
            for number, (image, text) in enumerate(pages, 1):
                original = originals[number - 1] if number <= len(originals) else Original()
                singles.append(_page(stamp, image, text, number, original))
                pdf.pages.append(singles[-1].pages[0])
            if not singles:
                raise RenderFailed("no pages")
            out = io.BytesIO()
            pdf.save(out)  # qpdf reads each page's streams from its single here
        return write_identity(out.getvalue(), mark)
    except (pdfium.PdfiumError, pikepdf.PdfError, ValueError, OSError) as exc:
        raise RenderFailed(type(exc).__name__) from None
    finally:
        for single in singles:
            single.close()


def _page(
    stamp: Stamp, image: GrayPage, text: PageText, number: int, original: Original
) -> pikepdf.Pdf:
    """One stamped page as a one-page PDF, its image encoded as its source was.

    searchable_pdf lays the words and sizes the page; the image it places is a
    white one of the page's size, cheap for pdfium to compress, swapped at once.
    """
    stamped, moved = stamp.page(image, text, number)
    blank = np.full((stamped.height, stamped.width), 255, dtype=np.uint8)
    single = pikepdf.open(io.BytesIO(searchable_pdf([(blank, moved)], stamp.dpi)))
    bilevel = original.bilevel or encode.is_bilevel(image)
    shrunk = encode.shrink(stamped, original.scale(stamp.dpi))
    encode.place(single.pages[0], encode.pdf_image(shrunk, bilevel))
    return single


def render_page_png(
    image: GrayPage,
    mark: ReleaseMark,
    *,
    dpi: int = 200,
    page_number: int = 1,
    original: Original | None = None,
) -> bytes:
    """One watermarked page as PNG, the release id and policy hash in tEXt chunks.

    Encoded as its source was: 1 bit for a bilevel scan, 16 grey levels otherwise,
    at the scan's resolution (``original``, for a page of a PDF source).
    """
    original = original or Original()
    info = PngImagePlugin.PngInfo()
    info.add_text("Custody-Release-Id", mark.release_id)
    info.add_text("Custody-Policy-Sha256", mark.policy_sha256)
    scale = original.scale(dpi)
    stamped = encode.shrink(Stamp(mark, dpi).image(image, page_number), scale)
    bilevel = original.bilevel or encode.is_bilevel(image)
    return encode.png(stamped, bilevel, info, dpi * scale)


def content_top(mark: ReleaseMark, dpi: int, width: int) -> int:
    """Where the scan begins on a released page ``width`` pixels wide: the top band's height."""
    return Stamp(mark, dpi).head(width).height
