"""The check that does not trust the plan: detectors re-run on the finished view.

A synthetic referral letter read by the real OCR engine. One test hides words
from the plan (as a born-digital page's text layer hides what an annotation
draws); one swaps in an engine that always reads an MRN back (a fault injected
on purpose, as a painting bug would leave it) to show the refusal's form.
The check's second reader has its own file (``test_second_reader.py``), in the
default suite.
"""

from __future__ import annotations

import json

import pytest

from activities.engines.base import OcrEngine
from activities.pages.raster import GrayPage
from activities.redact.core import make_view
from activities.redact.detect import RECOGNISERS
from activities.redact.lines import Tok, page_lines
from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION
from custody.errors import IdentifierFound
from custody.models import PageText, Word
from tests.helpers import StandInEngine

pytestmark = pytest.mark.slow
DPI = 200


def test_redaction_scan_paints_what_the_plan_never_saw(
    letter: tuple[list[GrayPage], list[PageText]], ocr_engine: OcrEngine
) -> None:
    """The MRN's words hidden from the plan, its label's too (else the plan paints the
    label's empty slot): the view's re-OCR finds it, and it is painted."""
    images, pages = letter
    first = make_plan(pages, None, DEFAULT_REDACTION)
    mrn = [r for r in first.regions if r.source == "mrn"]
    assert mrn, "the letter prints an MRN beside its label"
    hidden = {(t.page, t.index) for r in mrn for t in _words_in(pages[0], r.box)}
    label = next(r.context for r in RECOGNISERS if r.name == "mrn")
    for line in page_lines(pages[0]):
        for match in label.finditer(line.text):
            hidden |= {(t.page, t.index) for t in line.covering(match.start(), match.end())}
    blind = pages[0].model_copy(
        update={"words": [w for i, w in enumerate(pages[0].words) if (0, i) not in hidden]}
    )
    assert not [r for r in make_plan([blind], None, DEFAULT_REDACTION).regions if r.source == "mrn"]
    made = make_view(enumerate(images), [blind], None, DEFAULT_REDACTION, ocr_engine, DPI)
    assert ("recheck", "mrn") in {(r.reason, r.source) for r in made.plan.regions}
    values = [s for s in first.secrets if s.isdigit() and len(s) >= 5]
    for value in values:
        assert normal(value) not in normal(" ".join(made.surfaces.ocr))


class _ReadsAnMrn(StandInEngine):
    """Stand-in engine (a fault injected on purpose): every page reads "MRN 7400787" back."""

    def recognise(self, image: GrayPage, page: int) -> PageText:
        words = [_word("MRN", 100, 100), _word("7400787", 220, 100)]
        height, width = image.shape
        return PageText(
            page=page, width=width, height=height, text="MRN 7400787", words=words,
            mean_confidence=1, seconds=0,
        )  # fmt: skip


def test_redaction_scan_refusal_names_kind_page_and_box_never_text(
    letter: tuple[list[GrayPage], list[PageText]],
) -> None:
    """A view whose re-read always shows an MRN: IDENTIFIER_FOUND with {kind, page, box}."""
    images, pages = letter
    with pytest.raises(IdentifierFound) as caught:
        make_view(enumerate(images), pages, None, DEFAULT_REDACTION, _ReadsAnMrn(), DPI)
    assert caught.value.code == "IDENTIFIER_FOUND" and "7400787" not in str(caught.value)
    found = json.loads(caught.value.detail.removeprefix("found: "))
    assert {"kind": "mrn", "page": 0, "box": [220, 100, 346, 130]} in found
    assert all(set(f) == {"kind", "page", "box"} for f in found)


def _word(text: str, x: int, y: int) -> Word:
    x1, y1 = x + 18 * len(text), y + 30
    return Word(text=text, confidence=0.99, box=[[x, y], [x1, y], [x1, y1], [x, y1]])


def _words_in(page: PageText, box: tuple[int, int, int, int]) -> list[Tok]:
    x0, y0, x1, y1 = box
    return [
        t
        for line in page_lines(page)
        for t in line.tokens
        if t.x0 >= x0 and t.x1 <= x1 and t.y0 >= y0 and t.y1 <= y1
    ]
