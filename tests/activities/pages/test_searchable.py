"""The searchable PDF: the scan as received, with every word findable where it sits."""

from __future__ import annotations

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFont

from activities.pages.searchable import searchable_pdf
from custody.models import PageText, Word

DPI = 200
PT = 72 / DPI


def _page(index: int, words: list[tuple[str, tuple[int, int, int, int]]]) -> tuple:
    image = Image.new("L", (900, 400), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    boxed = []
    for text, (x0, y0, x1, y1) in words:
        draw.text((x0, y0), text, fill=0, font=font)
        boxed.append(Word(text=text, confidence=0.9, box=[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
    text = PageText(
        page=index,
        width=900,
        height=400,
        text=" ".join(t for t, _ in words),
        words=boxed,
        mean_confidence=0.9,
        seconds=1.0,
    )
    return np.array(image), text


def _render(pdf: pdfium.PdfDocument, index: int) -> np.ndarray:
    return np.array(pdf[index].render(scale=DPI / 72).to_pil().convert("L"), dtype=np.int16)


def test_searchable_pdf_text_layer_finds_each_word_on_its_box() -> None:
    """Extracted text is the recognised words, each one's rectangle inside its box."""
    words = [("Referral", (50, 100, 220, 145)), ("cardiology", (330, 100, 520, 145))]
    pdf = pdfium.PdfDocument(searchable_pdf([_page(0, words), _page(1, words[:1])], dpi=DPI))
    assert len(pdf) == 2
    assert pdf[0].get_size() == (900 * PT, 400 * PT)
    textpage = pdf[0].get_textpage()
    assert textpage.get_text_range().split() == ["Referral", "cardiology"]
    assert pdf[1].get_textpage().get_text_range().split() == ["Referral"]
    rects = [textpage.get_rect(i) for i in range(textpage.count_rects())]
    for rect, (_, (x0, y0, x1, y1)) in zip(rects, words, strict=True):
        left, bottom, right, top = rect
        page_h = 400 * PT
        slack = 6.0  # points: glyph side bearings and the baseline offset
        assert abs(left - x0 * PT) < slack and abs(right - x1 * PT) < slack
        assert page_h - y1 * PT - slack < bottom < top < page_h - y0 * PT + slack


def test_searchable_pdf_shows_the_scan_unchanged() -> None:
    """The text layer is invisible: the page renders as the original image."""
    image, text = _page(0, [("Discharge", (60, 200, 260, 245))])
    rendered = _render(pdfium.PdfDocument(searchable_pdf([(image, text)], dpi=DPI)), 0)
    assert rendered.shape == image.shape
    assert np.abs(rendered - image.astype(np.int16)).mean() < 2.0
    no_words = text.model_copy(update={"words": []})
    bare = _render(pdfium.PdfDocument(searchable_pdf([(image, no_words)], dpi=DPI)), 0)
    assert np.array_equal(rendered, bare)


def test_searchable_pdf_skips_empty_and_degenerate_words() -> None:
    """Blank words and zero-area boxes are left out rather than breaking the page."""
    image, text = _page(0, [("Valid", (50, 50, 150, 90))])
    extra = [
        Word(text="  ", confidence=0.5, box=[[10, 10], [40, 10], [40, 30], [10, 30]]),
        Word(text="flat", confidence=0.5, box=[[10, 10], [40, 10], [40, 10], [10, 10]]),
    ]
    text = text.model_copy(update={"words": text.words + extra})
    pdf = pdfium.PdfDocument(searchable_pdf([(image, text)], dpi=DPI))
    assert pdf[0].get_textpage().get_text_range().split() == ["Valid"]
