"""The engines ``custody bench ocr`` sets Custody's beside, each as a user would run it.

Every one is a ``Recogniser``: an 8-bit page and its index in, a ``Reading``
out (the text in reading order, and the confidence each word or line came
with, for the confidence bands). Bare Tesseract's ``image_to_string`` gives
no confidences, so it has no bands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from activities.engines.base import OcrEngine, reading_order_text
from activities.pages.raster import GrayPage
from custody.extras import needs
from custody.models import Word
from starter.bench.bands import Scored


@dataclass(frozen=True)
class Reading:
    text: str
    scored: list[Scored] = field(default_factory=list)  # (word or line, confidence)
    confidence: float | None = None  # the page's mean, as the engine states it


Recogniser = Callable[[GrayPage, int], Reading]


def custody(engine: OcrEngine) -> Recogniser:
    """Custody's engine as the OCR activity calls it; its page mean is the check's input."""

    def recognise(image: GrayPage, index: int) -> Reading:
        page = engine.recognise(image, index)
        scored = [(w.text, w.confidence) for w in page.words]
        return Reading(page.text, scored, page.mean_confidence)

    return recognise


def rapidocr_default() -> Recogniser:
    """What ``RapidOCR()(image)`` gives: default arguments, the models inside the wheel."""
    from rapidocr import RapidOCR

    engine = RapidOCR()

    def recognise(image: GrayPage, index: int) -> Reading:
        out: Any = engine(image)  # a 2-D page is turned to BGR by RapidOCR itself
        if out.boxes is None or out.txts is None or out.scores is None:
            return Reading("", [], None)
        words = [_word(b, t, s) for b, t, s in zip(out.boxes, out.txts, out.scores, strict=True)]
        return _reading(words)

    return recognise


def easyocr_default() -> Recogniser:
    """What ``easyocr.Reader(['en']).readtext(image)`` gives, offline, default arguments."""
    with needs("easyocr", "custody bench ocr --engines easyocr_default"):
        import easyocr
        import easyocr_en_models

    models = str(easyocr_en_models.model_dir())
    reader = easyocr.Reader(
        ["en"],
        gpu=False,
        download_enabled=False,
        model_storage_directory=models,
        user_network_directory=models,  # else it creates ~/.EasyOCR
        verbose=False,
    )

    def recognise(image: GrayPage, index: int) -> Reading:
        # ``image`` is 8-bit already: bare EasyOCR crashes on 1-bit TIFF pages.
        return _reading([_word(box, text, conf) for box, text, conf in reader.readtext(image)])

    return recognise


def tesseract(image: GrayPage, index: int) -> Reading:
    import pytesseract
    from PIL import Image

    return Reading(str(pytesseract.image_to_string(Image.fromarray(image))))


def _word(box: Any, text: str, confidence: Any) -> Word:
    points = [[max(round(float(x)), 0), max(round(float(y)), 0)] for x, y in box]
    return Word(text=str(text).strip(), confidence=float(confidence), box=points)


def _reading(words: list[Word]) -> Reading:
    """Text in reading order; the page mean weighted by characters, as the check weighs pages."""
    chars = sum(len(w.text) for w in words)
    mean = sum(w.confidence * len(w.text) for w in words) / chars if chars else None
    return Reading(reading_order_text(words), [(w.text, w.confidence) for w in words], mean)
