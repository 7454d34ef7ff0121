"""The output schema's language check: each page in a language the policy expects.

py3langid's model ships inside its wheel (about 4 MiB, no download). It knows
some 140 languages, many of them rare: on short or noisy OCR text (receipts,
form fields) the rare ones soak up probability and the verdict goes flat. So
pages are judged among the widely used languages below plus the expected
ones, and a page fails only when another language wins *confidently*: an
unsure page is given the benefit of the doubt rather than quarantined.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from custody.models import PageText

#: Pages with fewer letters than this are not judged: a receipt's total or a
#: stamp says nothing of its language (measured: below ~50 letters the verdict
#: on clean English text is often under 0.5).
MIN_LETTERS = 50
#: Another language must hold at least this probability to fail the page.
CONFIDENT = 0.9
CANDIDATES = (
    *("en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "da", "nb", "fi", "cs", "sk"),
    *("hu", "ro", "tr", "el", "ru", "uk", "bg", "hr", "sl", "et", "lv", "lt", "ga", "ms"),
    *("id", "vi", "zh", "ja", "ko", "ar", "he", "hi", "th", "tl", "sw"),
)
_LOCK = threading.Lock()  # the identifier's language set is state: one page at a time


@cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def page_language(text: str, expected: Sequence[str]) -> tuple[str, float] | None:
    """The page's most likely language and its probability; None if too short to judge."""
    if sum(c.isalpha() for c in text) < MIN_LETTERS:
        return None
    ident = _identifier()
    langs = sorted({*CANDIDATES, *expected} & set(ident.nb_classes))
    with _LOCK:
        ident.set_languages(langs)
        lang, prob = ident.classify(text)
    return str(lang), float(prob)


def mismatched_pages(pages: Sequence[PageText], expected: Sequence[str]) -> list[int]:
    """Pages (0-based) surely in a language outside ``expected``; none if nothing is expected."""
    if not expected:
        return []
    wrong = []
    for page in pages:
        verdict = page_language(page.text, expected)
        if verdict is not None and verdict[0] not in expected and verdict[1] >= CONFIDENT:
            wrong.append(page.page)
    return wrong
