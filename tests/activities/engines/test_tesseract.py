"""The Tesseract engine (and its EasyOCR-refined ``hybrid`` form) on real corpus pages.

Real ``tesseract`` 5.3 and real EasyOCR weights; no stand-ins. Thresholds were
measured on the 2-core dev box (2026-11-29) and set with margin: phototest word
F1 measured 1.000 (asserted >= 0.95); FUNSD 82562350 word F1 measured 0.656
upscaled against 0.391 at its own ~100 dpi (asserted >= 0.55 and better than
without upscaling). Output was byte-identical across runs, so the margins only
absorb another tesseract build's rounding.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from activities.engines.base import mean_confidence
from activities.engines.selection import build_engine, build_recorded
from activities.engines.tesseract import TesseractEngine, _parse_tsv, _run_tesseract, tesseract_info
from custody.models import PageText
from custody.settings import Settings
from starter.bench.textmetrics import word_f1
from tests.corpus import CORPUS, corpus_page, truth

PHOTOTEST = CORPUS / "ocr_gt" / "tess_phototest.tif"
FORM = CORPUS / "ocr_gt" / "funsd_82562350.png"  # ~100 dpi: the upscaling case


@pytest.fixture(scope="module")
def engine() -> TesseractEngine:
    return TesseractEngine(torch_threads=1)


@pytest.fixture(scope="module")
def phototest_page(engine: TesseractEngine) -> PageText:
    return engine.recognise(corpus_page(PHOTOTEST, "image/tiff"), 0)


def test_tesseract_engine_phototest_word_f1(phototest_page: PageText) -> None:
    """The Tesseract phototest page is read (near) perfectly, lines in order."""
    assert word_f1(phototest_page.text, truth(PHOTOTEST)) >= 0.95
    assert phototest_page.text.count("\n") >= 5  # six printed lines


def test_tesseract_engine_upscaling_helps_low_dpi_form(engine: TesseractEngine) -> None:
    """A ~100-dpi FUNSD form reads better upscaled than at its own resolution."""
    image = corpus_page(FORM, "image/png")
    upscaled = word_f1(engine.recognise(image, 0).text, truth(FORM))
    as_is = word_f1(TesseractEngine(1, upscale=1).recognise(image, 0).text, truth(FORM))
    assert upscaled >= 0.55
    assert upscaled > as_is + 0.1


def test_tesseract_engine_page_fields_consistent(phototest_page: PageText) -> None:
    """Words, boxes, confidences and the page text agree with one another."""
    page = phototest_page
    assert (page.page, page.width, page.height) == (0, 640, 480)
    assert page.words and page.seconds > 0
    for word in page.words:
        assert word.text and word.text in page.text
        assert 0.0 <= word.confidence <= 1.0
        (x0, y0), _, (x1, y1), _ = word.box
        assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
    assert page.mean_confidence == pytest.approx(mean_confidence(page.words))
    assert 0.8 < page.mean_confidence <= 1.0


def test_tesseract_engine_boxes_in_page_pixels_when_upscaled(engine: TesseractEngine) -> None:
    """Boxes of an upscaled page are mapped back onto the original page's pixels."""
    image = corpus_page(FORM, "image/png")
    page = engine.recognise(image, 0)
    assert (page.height, page.width) == image.shape
    right = max(x for w in page.words for x, _ in w.box)
    bottom = max(y for w in page.words for _, y in w.box)
    # Upscaled coordinates would overshoot; text fills most of the form.
    assert page.width // 2 < right <= page.width and page.height // 2 < bottom <= page.height


def test_tesseract_engine_repeat_is_byte_identical(
    engine: TesseractEngine, phototest_page: PageText
) -> None:
    """The same page recognised twice gives byte-identical text and boxes."""
    again = engine.recognise(corpus_page(PHOTOTEST, "image/tiff"), 0)
    assert again.text.encode() == phototest_page.text.encode()
    assert [w.box for w in again.words] == [w.box for w in phototest_page.words]


def test_tesseract_engine_bilevel_array_does_not_crash(engine: TesseractEngine) -> None:
    """A boolean (1-bit) array is recognised, and a colour array is refused."""
    with Image.open(PHOTOTEST) as image:
        bits = np.asarray(image)[:160]
    assert bits.dtype == np.bool_
    page = engine.recognise(bits, 3)
    assert page.page == 3 and page.words
    with pytest.raises(ValueError):
        engine.recognise(np.zeros((10, 10, 3), dtype=np.uint8), 0)


def test_tesseract_engine_blank_page_has_no_words(engine: TesseractEngine) -> None:
    """A white page yields no words and zero confidence instead of an error."""
    page = engine.recognise(np.full((300, 200), 255, dtype=np.uint8), 0)
    assert page.words == [] and page.text == "" and page.mean_confidence == 0.0


def test_tesseract_engine_records_version_params_and_traineddata_hash(
    engine: TesseractEngine,
) -> None:
    """The record names tesseract's version, the tuning that ran and eng.traineddata's sha256."""
    version, tessdata = tesseract_info()
    assert engine.name == "tesseract" and engine.version == f"tesseract{version}"
    traineddata = (tessdata / "eng.traineddata").read_bytes()
    assert engine.model_hashes() == {"eng.traineddata": hashlib.sha256(traineddata).hexdigest()}
    params = engine.params()
    assert params["psm"] == 3 and params["upscale"] == 2 and params["refine_below"] == 0.0
    with pytest.raises(TypeError):
        TesseractEngine(1, upscale_factor=2)  # misspelt tuning fails at construction


def test_hybrid_engine_refines_unsure_words_with_easyocr() -> None:
    """``hybrid`` re-reads low-confidence words with EasyOCR and records both models."""
    hybrid = build_engine(Settings(ocr_engine="hybrid", torch_threads=1))
    assert isinstance(hybrid, TesseractEngine)
    assert hybrid.name == "tesseract+easyocr" and "easyocr1.7.2" in hybrid.version
    assert sorted(hybrid.model_hashes()) == ["eng.traineddata", "english_g2.pth"]
    assert hybrid.params()["refine_below"] == 0.7 and hybrid.params()["torch_threads"] == 1
    image = corpus_page(FORM, "image/png")
    plain = TesseractEngine(1).recognise(image, 0)
    refined = hybrid.recognise(image, 0)
    assert [w.box for w in refined.words] == [w.box for w in plain.words]
    changed = [(a, b) for a, b in zip(plain.words, refined.words, strict=True) if a.text != b.text]
    # Only words Tesseract was unsure of change, each to a reading EasyOCR is sure of.
    assert changed and all(a.confidence < 0.7 <= b.confidence for a, b in changed)
    assert word_f1(refined.text, truth(FORM)) >= 0.55
    assert hybrid.recognise(image, 0).text == refined.text


def test_build_engine_follows_the_setting() -> None:
    """CUSTODY_OCR_ENGINE picks the engine; rapidocr is the default, tesseract the light one."""
    assert Settings().ocr_engine == "rapidocr"
    assert build_engine(Settings(), warm=False).name == "rapidocr"
    assert build_engine(Settings(ocr_engine="tesseract"), warm=False).name == "tesseract"
    easy = build_engine(Settings(ocr_engine="easyocr", torch_threads=1), warm=False)
    assert easy.name == "easyocr"


def test_parse_tsv_maps_boxes_back_and_skips_non_words() -> None:
    """Only word rows with text count; upscaled boxes are divided back, clipped to the page."""
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop"
    header += "\twidth\theight\tconf\ttext"
    rows = [
        "4\t1\t1\t1\t1\t0\t10\t10\t100\t20\t-1\t",
        "5\t1\t1\t1\t1\t1\t10\t11\t41\t20\t96.5\tHello",
        "5\t1\t1\t1\t1\t2\t60\t10\t9\t20\t95\t ",
        "5\t1\t2\t1\t1\t1\t190\t180\t20\t30\t40\tedge",
    ]
    words = _parse_tsv("\n".join([header, *rows]), scale=2, width=100, height=100)
    assert [w.text for w in words] == ["Hello", "edge"]
    assert words[0].box == (5, 5, 26, 16) and words[0].confidence == pytest.approx(0.965)
    assert words[1].box == (95, 90, 100, 100) and words[1].line == (2, 1, 1)


def test_run_tesseract_failure_raises() -> None:
    """A tesseract error (here an unknown language) raises instead of returning no text."""
    with pytest.raises(RuntimeError, match="tesseract exited"):
        _run_tesseract(["stdin", "stdout", "-l", "xx_missing"], b"not an image", 30.0)


def test_build_recorded_rebuilds_the_engine_a_result_names(engine: TesseractEngine) -> None:
    """A recorded name and params rebuild an engine with the same params (a pin/rollback)."""
    again = build_recorded(engine.name, engine.params(), 1, warm=False)
    assert again.name == engine.name and again.params() == engine.params()
    hybrid = build_engine(Settings(ocr_engine="hybrid", torch_threads=1), warm=False)
    rebuilt = build_recorded(hybrid.name, hybrid.params(), 1, warm=False)
    assert rebuilt.name == "tesseract+easyocr" and rebuilt.params() == hybrid.params()
    easy = build_recorded("easyocr", {"canvas_size": 1600, "device": "cpu"}, 1, warm=False)
    assert easy.params()["canvas_size"] == 1600
    with pytest.raises(ValueError):
        build_recorded("nope", {}, 1)


def test_missing_tesseract_binary_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without tesseract on PATH the error names the fix instead of a bare FileNotFoundError."""
    monkeypatch.setenv("PATH", "/nonexistent")  # the fault: no binary to find
    with pytest.raises(RuntimeError, match="system-deps"):
        _run_tesseract(["--version"], b"", 30.0)
