"""Born-digital PDF pages: read the text layer instead of running OCR on it.

A page qualifies when it carries extractable text and no image covers most of
it. A scanned page with a hidden OCR layer (what OCRmyPDF and our own
searchable PDF produce) has a page-sized image, so it is recognised again
rather than trusted: only text the document's author typeset is taken as is.
Words come out in the same pixel space as the rasterised page (``dpi``), so
boxes line up with OCR'd pages of the same document.

``page_layer`` parses untrusted bytes with pdfium, so it runs only inside the
locked-down inspection child (``activities.inspect.render``); the worker asks
for layers through ``activities.inspect.sandboxed.iter_layers_sandboxed`` and
never opens the document itself. ``layer_sha256`` and ``ENGINE`` are what the
worker keeps of a layer.
"""

from __future__ import annotations

import hashlib

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from custody.models import PageText, Word

ENGINE = "pdf-text-layer"
# A page that is mostly picture is a scan, whatever text it carries.
_MAX_IMAGE_SHARE = 0.5
_MIN_CHARS = 1


def page_layer(pdf: pdfium.PdfDocument, index: int, dpi: int) -> PageText | None:
    """Page ``index``'s typeset text with word boxes at ``dpi``; None for a scan or no text."""
    page = pdf[index]
    try:
        return _read(page, index, dpi / 72)
    finally:
        page.close()


def any_layer(page: pdfium.PdfPage, index: int, dpi: int) -> PageText:
    """A page's text layer as words at ``dpi``, hidden or not, whatever covers the page: how
    the redaction check reads a view this process built (its words lie over its images)."""
    return _layer(page, index, dpi / 72).model_copy(update={"source": "text-layer"})


def layer_sha256(text: PageText) -> str:
    """What the record keeps for a text-layer page in place of model hashes."""
    return hashlib.sha256(text.text.encode()).hexdigest()


def _read(page: pdfium.PdfPage, index: int, scale: float) -> PageText | None:
    width, height = page.get_size()
    if _image_share(page, width * height) > _MAX_IMAGE_SHARE or _has_invisible_text(page):
        return None
    layer = _layer(page, index, scale)
    return layer if len(layer.text) >= _MIN_CHARS else None


def _layer(page: pdfium.PdfPage, index: int, scale: float) -> PageText:
    """The page's text layer as words at ``scale``, empty or not."""
    width, height = page.get_size()
    textpage = page.get_textpage()
    try:
        text, words = textpage.get_text_range(), _words(textpage, height, scale)
    finally:
        textpage.close()
    return PageText(
        page=index,
        width=round(width * scale),
        height=round(height * scale),
        text=_tidy(text),
        words=words,
        mean_confidence=1.0,
        seconds=0.0,
    )


def _tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.replace("\r", "").split("\n"))
    return "\n".join(line for line in lines if line)


def _image_share(page: pdfium.PdfPage, area: float) -> float:
    covered = 0.0
    for obj in page.get_objects(filter=[raw.FPDF_PAGEOBJ_IMAGE]):
        left, bottom, right, top = obj.get_bounds()
        covered += max(0.0, right - left) * max(0.0, top - bottom)
    return covered / area if area > 0 else 1.0


def _has_invisible_text(page: pdfium.PdfPage) -> bool:
    # Render mode 3 is text no reader shows (an OCR layer, or words a page
    # claims but does not display): the page is read as it looks instead.
    return any(
        raw.FPDFTextObj_GetTextRenderMode(obj.raw) == raw.FPDF_TEXTRENDERMODE_INVISIBLE
        for obj in page.get_objects(filter=[raw.FPDF_PAGEOBJ_TEXT])
    )


def _words(textpage: pdfium.PdfTextPage, page_height: float, scale: float) -> list[Word]:
    words: list[Word] = []
    chars: list[str] = []
    box = [float("inf"), float("inf"), float("-inf"), float("-inf")]
    for i in range(textpage.count_chars()):
        char = textpage.get_text_range(i, 1)
        if char.isspace() or not char:
            if chars:
                words.append(_word(chars, box, page_height, scale))
            chars, box = [], [float("inf"), float("inf"), float("-inf"), float("-inf")]
            continue
        left, bottom, right, top = textpage.get_charbox(i)
        chars.append(char)
        box = [min(box[0], left), min(box[1], bottom), max(box[2], right), max(box[3], top)]
    if chars:
        words.append(_word(chars, box, page_height, scale))
    return words


def _word(chars: list[str], box: list[float], page_height: float, scale: float) -> Word:
    left, bottom, right, top = box
    x0, x1 = round(left * scale), round(right * scale)
    y0, y1 = round((page_height - top) * scale), round((page_height - bottom) * scale)
    return Word(text="".join(chars), confidence=1.0, box=[[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
