"""The searchable PDF: the scan as received, with every word findable where it sits."""

from __future__ import annotations

import importlib.util
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw, ImageFont

from activities.engines.base import OcrEngine
from activities.output import merge_pdfs
from activities.pages.layout import page_lines
from activities.pages.searchable import searchable_pdf
from custody.models import PageText, Word

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "make_examples.py"

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
    """Extracted text is the recognised words, each one's glyphs inside its box."""
    words = [("Referral", (50, 100, 220, 145)), ("cardiology", (330, 100, 520, 145))]
    pdf = pdfium.PdfDocument(searchable_pdf([_page(0, words), _page(1, words[:1])], dpi=DPI))
    assert len(pdf) == 2
    assert pdf[0].get_size() == (900 * PT, 400 * PT)
    textpage = pdf[0].get_textpage()
    text = textpage.get_text_range()
    assert text.split() == ["Referral", "cardiology"]
    assert pdf[1].get_textpage().get_text_range().split() == ["Referral"]
    for word, (x0, y0, x1, y1) in words:
        start = text.index(word)
        boxes = [textpage.get_charbox(i) for i in range(start, start + len(word))]
        left, right = min(b[0] for b in boxes), max(b[2] for b in boxes)
        bottom, top = min(b[1] for b in boxes), max(b[3] for b in boxes)
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


def _discharge_pages(ocr_engine: OcrEngine, out: Path) -> list[tuple[np.ndarray, PageText]]:
    """The shipped two-page discharge example, rendered at 200 dpi and read by the engine."""
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(out)
    pdf = pdfium.PdfDocument(out / "discharge.pdf")
    images = [np.asarray(page.render(scale=DPI / 72).to_pil().convert("L")) for page in pdf]
    return [(image, ocr_engine.recognise(image, n)) for n, image in enumerate(images)]


@pytest.mark.parametrize(
    "tool", [["pdftotext", "{pdf}", "-"], ["mutool", "draw", "-F", "txt", "{pdf}"]]
)
def test_searchable_pdf_extracts_every_word_and_line_in_poppler_and_mupdf(
    ocr_engine: OcrEngine, tmp_path: Path, tool: list[str]
) -> None:
    """pdftotext and mutool find every recognised word on its own and every line whole."""
    pages = _discharge_pages(ocr_engine, tmp_path)
    path = tmp_path / "searchable.pdf"
    path.write_bytes(merge_pdfs(searchable_pdf([page], dpi=DPI) for page in pages))
    command = [part.format(pdf=path) for part in tool]
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout
    words = Counter(w.text for _, page in pages for w in page.words)
    assert sum(words.values()) > 100
    assert words - Counter(out.split()) == Counter()  # none joined to a neighbour
    printed = {" ".join(line.split()) for line in out.splitlines()}
    lines = [line.text for _, page in pages for line in page_lines(page)]
    assert [line for line in lines if line not in printed] == []
