"""The EasyOCR engine on real corpus pages, plus its reading-order assembly.

Thresholds were measured on the 2-core CPU dev box with the default tuning
(see the comment block in ``activities/engines/base.py``) and set with margin:
phototest word F1 measured 1.000, asserted >= 0.90; FUNSD 82251504 word F1
measured 0.455, asserted >= 0.38, and CER measured 0.144, asserted <= 0.22.
The output was byte-identical across runs and processes, so the margins only
absorb other CPUs' float rounding, not run-to-run noise.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from PIL import Image

from activities.engines.base import EasyOcrEngine, mean_confidence, reading_order_text
from activities.pages.raster import iter_pages
from custody.models import PageText, Word
from starter.bench.textmetrics import cer, word_f1
from tests.corpus import CORPUS

PHOTOTEST = CORPUS / "ocr_gt" / "tess_phototest.tif"
FORM = CORPUS / "ocr_gt" / "funsd_82251504.png"


@pytest.fixture(scope="module")
def engine() -> EasyOcrEngine:
    if not PHOTOTEST.is_file() or not FORM.is_file():
        pytest.fail(f"research corpus not found at {CORPUS}; set CUSTODY_CORPUS")
    return EasyOcrEngine(torch_threads=max(1, min(2, os.cpu_count() or 1)))


@pytest.fixture(scope="module")
def phototest_page(engine: EasyOcrEngine) -> PageText:
    [(index, image)] = list(iter_pages(PHOTOTEST, "image/tiff", dpi=200))
    return engine.recognise(image, index)


def test_easyocr_engine_reader_loaded_once_per_process(engine: EasyOcrEngine) -> None:
    """A second engine object reuses the first one's reader instead of loading another."""
    # Same thread count: torch's setting is process-wide and later tests share it.
    assert EasyOcrEngine(torch_threads=engine.torch_threads).reader() is engine.reader()


def test_easyocr_engine_phototest_word_f1(phototest_page: PageText) -> None:
    """The Tesseract phototest page is read almost perfectly."""
    reference = PHOTOTEST.with_suffix(".txt").read_text(encoding="utf-8")
    assert word_f1(phototest_page.text, reference) >= 0.90


def test_easyocr_engine_form_quality(engine: EasyOcrEngine) -> None:
    """A noisy FUNSD form stays above the measured quality floor."""
    [(index, image)] = list(iter_pages(FORM, "image/png", dpi=200))
    page = engine.recognise(image, index)
    reference = FORM.with_suffix(".txt").read_text(encoding="utf-8")
    assert word_f1(page.text, reference) >= 0.38
    assert cer(page.text, reference) <= 0.22


def test_easyocr_engine_page_fields_consistent(phototest_page: PageText) -> None:
    """Words, boxes, confidences and the page text agree with one another."""
    page = phototest_page
    assert (page.page, page.width, page.height) == (0, 640, 480)
    assert page.words and page.seconds > 0
    for word in page.words:
        assert word.text and word.text in page.text
        assert 0.0 <= word.confidence <= 1.0
        assert len(word.box) == 4
        assert all(0 <= x <= page.width and 0 <= y <= page.height for x, y in word.box)
    assert page.mean_confidence == pytest.approx(mean_confidence(page.words))
    assert 0.5 < page.mean_confidence <= 1.0
    assert page.text.count("\n") >= 5  # phototest has six printed lines


def test_easyocr_engine_bilevel_array_does_not_crash(engine: EasyOcrEngine) -> None:
    """A boolean (1-bit) array is recognised instead of crashing EasyOCR."""
    with Image.open(PHOTOTEST) as image:
        bits = np.asarray(image)[:160]  # the top lines are enough, and fast
    assert bits.dtype == np.bool_
    page = engine.recognise(bits, 3)
    assert page.page == 3 and page.words


def test_easyocr_engine_repeat_is_byte_identical(
    engine: EasyOcrEngine, phototest_page: PageText
) -> None:
    """The same page recognised twice in one process gives byte-identical text."""
    [(index, image)] = list(iter_pages(PHOTOTEST, "image/tiff", dpi=200))
    again = engine.recognise(image, index)
    assert again.text.encode() == phototest_page.text.encode()
    assert [w.box for w in again.words] == [w.box for w in phototest_page.words]


def test_easyocr_engine_model_hashes_and_params(engine: EasyOcrEngine) -> None:
    """Both model files are hashed, and params record the tuning that ran."""
    hashes = engine.model_hashes()
    assert sorted(hashes) == ["craft_mlt_25k.pth", "english_g2.pth"]
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in hashes.values())
    params = engine.params()
    assert params["canvas_size"] == engine.tuning.canvas_size
    assert params["device"] == "cpu" and params["languages"] == "en"
    assert engine.name == "easyocr" and engine.version.startswith("1.7.2")


def test_easyocr_engine_unknown_tuning_rejected() -> None:
    """A misspelt tuning keyword fails at construction, not silently."""
    with pytest.raises(TypeError):
        EasyOcrEngine(torch_threads=1, canvas=1280)


def _word(text: str, x: int, y: int, w: int = 40, h: int = 20) -> Word:
    return Word(text=text, confidence=0.9, box=[[x, y], [x + w, y], [x + w, y + h], [x, y + h]])


def test_reading_order_text_groups_lines_and_sorts_words() -> None:
    """Slightly skewed boxes join one line; lines go top-down, words left-right."""
    words = [
        _word("world", 100, 13),
        _word("second", 0, 60),
        _word("hello", 0, 10),
        _word("line", 90, 58),
    ]
    assert reading_order_text(words) == "hello world\nsecond line"


def test_reading_order_text_tall_box_does_not_swallow_lines() -> None:
    """A tall box beside two lines does not merge them into one."""
    words = [_word("a", 0, 0), _word("b", 0, 30), _word("tall", 200, 0, h=50)]
    assert reading_order_text(words).splitlines() == ["a", "tall", "b"]


def test_mean_confidence_weights_by_characters() -> None:
    """Long words weigh more than short ones; no words gives 0.0."""
    words = [
        Word(text="abcd", confidence=1.0, box=[[0, 0]] * 4),
        Word(text="x", confidence=0.5, box=[[0, 0]] * 4),
    ]
    assert mean_confidence(words) == pytest.approx((4 * 1.0 + 0.5) / 5)
    assert mean_confidence([]) == 0.0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs torch CUDA and a GPU")
def test_easyocr_engine_runs_on_cuda_when_offered() -> None:
    """With a GPU, ``auto`` puts the reader on CUDA, unquantised, and the result says so."""
    gpu = EasyOcrEngine(torch_threads=1, device="auto")
    params = gpu.params()
    assert params["device"] == "cuda" and params["quantize"] is False
    assert str(gpu.reader().device).startswith("cuda")
    [(index, image)] = list(iter_pages(PHOTOTEST, "image/tiff", dpi=200))
    page = gpu.recognise(image, index)
    assert word_f1(page.text, PHOTOTEST.with_suffix(".txt").read_text(encoding="utf-8")) >= 0.90
