"""The output schema's language check on pages the real engine reads."""

from __future__ import annotations

import numpy as np

from activities.engines.base import OcrEngine
from activities.rules.language import MIN_LETTERS, mismatched_pages, page_language
from tests.activities.rules.drawn import GERMAN, REFERRAL, page


def test_language_german_page_mismatches_an_english_policy(ocr_engine: OcrEngine) -> None:
    """A German letter fails a policy expecting English; the English referral passes."""
    german = ocr_engine.recognise(np.asarray(page(GERMAN)), 0)
    english = ocr_engine.recognise(np.asarray(page(REFERRAL)), 1)
    assert mismatched_pages([german, english], ["en"]) == [0]
    assert mismatched_pages([german, english], ["en", "de"]) == []
    assert mismatched_pages([german], []) == []  # nothing expected: no check


def test_language_short_text_is_not_judged() -> None:
    """Too few letters to judge (a total, a stamp) gives no verdict rather than a guess."""
    assert page_language("TOTAL 12.50", ["en"]) is None
    assert page_language("Gesamt " * (MIN_LETTERS // 6 + 1), ["en"]) is not None
