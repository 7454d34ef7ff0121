"""The PDF rules: checked with pdfium and a raw read of the bytes, never by rendering.

Each rule reads only what it needs: the security handler, the raw scan, page
sizes (no page is loaded for those), then each page's object list, where an
image's pixel size comes from its dictionary. Nothing here decodes an image
stream, so a 35000x35000 CCITT page costs microseconds, not gigabytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from activities.inspect.pdfraw import RawFindings, read_pdf
from custody.errors import Code, DocumentRejected
from custody.limits import PolicyLimits as Limits

_LOCKED = {
    pdfium_c.FPDF_ERR_PASSWORD: "password required",
    pdfium_c.FPDF_ERR_SECURITY: "unsupported security handler",
}
_POINTS_PER_INCH = 72


@dataclass(frozen=True)
class PdfFacts:
    """What the rules learned of an accepted PDF; ``inspection`` makes it the verdict."""

    pages: int
    max_page_pixels: int
    notes: list[str]


def inspect_pdf(data: bytes, limits: Limits) -> PdfFacts:
    """Apply the PDF rules to ``data``; raise ``DocumentRejected`` on the first broken one."""
    # One buffer: pdfium and the raw scan see the same bytes.
    pdf = _open(data)
    try:
        notes = _encryption_notes(pdf, limits)
        raw = read_pdf(data, max_nodes=8 * limits.max_pages + 64)
        _check_structure(pdf, raw)
        pages = _page_count(pdf, raw, limits)
        largest = max(_page_pixels(pdf, i, limits) for i in range(pages))
        _check_raw_images(raw, limits)
        notes += _xfa_notes(pdf, raw, sum(_page_objects(pdf, i, limits) for i in range(pages)))
        if not pdfium_c.FPDF_DocumentHasValidCrossReferenceTable(pdf):
            notes.append("pdf_repaired")
    except pdfium.PdfiumError as exc:
        raise DocumentRejected(Code.CORRUPT, "pdfium could not read a page") from exc
    finally:
        pdf.close()
    return PdfFacts(pages=pages, max_page_pixels=largest, notes=notes)


def _open(data: bytes) -> Any:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code in _LOCKED:
            raise DocumentRejected(Code.ENCRYPTED, _LOCKED[exc.err_code]) from exc
        if exc.err_code == pdfium_c.FPDF_ERR_SUCCESS:
            raise DocumentRejected(Code.CORRUPT, "no pages") from exc
        raise DocumentRejected(Code.CORRUPT, f"unreadable (pdfium error {exc.err_code})") from exc


def _encryption_notes(pdf: Any, limits: Limits) -> list[str]:
    # pdfium opened it, so the user password is empty; the revision says it was encrypted.
    revision = int(pdfium_c.FPDF_GetSecurityHandlerRevision(pdf))
    if revision < 0:
        return []
    if not limits.allow_encrypted_empty_password:
        raise DocumentRejected(Code.ENCRYPTED, f"empty user password, security revision {revision}")
    return ["pdf_encrypted_empty_password"]


def _check_structure(pdf: Any, raw: RawFindings) -> None:
    if raw.active or pdfium_c.FPDFDoc_GetJavaScriptActionCount(pdf) > 0:
        names = ", ".join(sorted(raw.active)) or "JavaScript"
        raise DocumentRejected(Code.ACTIVE_CONTENT, names)
    if raw.needs_rendering or pdf.get_formtype() == pdfium_c.FORMTYPE_XFA_FULL:
        raise DocumentRejected(Code.DYNAMIC_XFA, "NeedsRendering")
    # Checked after the names: what we could read was clean, the rest we cannot vouch for.
    if raw.opaque_streams:
        raise DocumentRejected(Code.CORRUPT, f"{raw.opaque_streams} object stream(s) unreadable")
    if raw.walk == "revisit":
        raise DocumentRejected(Code.CORRUPT, "page tree visits a node twice")


def _page_count(pdf: Any, raw: RawFindings, limits: Limits) -> int:
    pages = len(pdf)
    if pages < 1:
        raise DocumentRejected(Code.CORRUPT, "no pages")
    if pages > limits.max_pages or raw.walk == "oversized":
        raise DocumentRejected(Code.PAGE_LIMIT, f"{pages} pages > {limits.max_pages}")
    # pdfium believes /Count; a tree holding other pages than it says would be
    # shown by some viewers and never OCRed by us.
    if raw.walk == "ok" and raw.leaf_pages != pages:
        raise DocumentRejected(Code.CORRUPT, f"page tree holds {raw.leaf_pages}, /Count {pages}")
    return pages


def _page_pixels(pdf: Any, index: int, limits: Limits) -> int:
    """Pixels of one page rasterised at ``ocr_dpi``, after the size rules."""
    width, height = (float(side) for side in pdf.get_page_size(index))  # no page load
    if not (math.isfinite(width) and math.isfinite(height)) or min(width, height) <= 0:
        raise DocumentRejected(Code.CORRUPT, "page box empty or invalid")
    inches = max(width, height) / _POINTS_PER_INCH
    if inches > limits.max_page_inches:
        raise DocumentRejected(
            Code.PIXEL_LIMIT, f"page side {inches:.1f} in > {limits.max_page_inches:g} in"
        )
    scale = limits.ocr_dpi / _POINTS_PER_INCH
    pixels = math.ceil(width * scale) * math.ceil(height * scale)
    if pixels > limits.max_page_pixels:
        raise DocumentRejected(Code.PIXEL_LIMIT, f"page {pixels} px > {limits.max_page_pixels}")
    return pixels


def _check_raw_images(raw: RawFindings, limits: Limits) -> None:
    # Image XObjects anywhere in the file, drawn or not: patterns, Type 3 glyphs
    # and annotation appearances are not in a page's object list.
    if raw.largest_image > limits.max_image_pixels:
        raise DocumentRejected(
            Code.PIXEL_LIMIT, f"image {raw.largest_image} px > {limits.max_image_pixels}"
        )


def _page_objects(pdf: Any, index: int, limits: Limits) -> int:
    """Count the page's objects, checking each image (inline ones too) against the limit."""
    page = pdf[index]
    try:
        count = 0
        for obj in page.get_objects():
            count += 1
            if obj.type != pdfium_c.FPDF_PAGEOBJ_IMAGE:
                continue
            width, height = obj.get_px_size()
            if width * height > limits.max_image_pixels:
                raise DocumentRejected(
                    Code.PIXEL_LIMIT, f"image {width * height} px > {limits.max_image_pixels}"
                )
        return count
    finally:
        page.close()


def _xfa_notes(pdf: Any, raw: RawFindings, objects: int) -> list[str]:
    if not (raw.xfa or pdf.get_formtype() == pdfium_c.FORMTYPE_XFA_FOREGROUND):
        return []
    if objects == 0:
        # The pages are placeholders: the content lives only in the XFA form.
        raise DocumentRejected(Code.DYNAMIC_XFA, "XFA form with no page content")
    return ["pdf_xfa_static"]
