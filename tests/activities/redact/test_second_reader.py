"""The check's second reader: what the workers' engine never detected is still painted.

The real engine wrapped so that it never detects a synthetic referral's birth-date
line (a fault injected on purpose: PP-OCRv6 did so on a dotted-leader fax page,
seed 10 of the redaction bench), and the check's real second reader (Tesseract,
sparse mode), against the bench's own reading (Tesseract, psm 3).
"""

from __future__ import annotations

from activities.engines.base import OcrEngine
from activities.engines.selection import build_checker
from activities.engines.tesseract import TesseractEngine
from activities.pages.raster import GrayPage
from activities.redact.check import read_surfaces
from activities.redact.core import make_view
from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION
from custody.models import PageText, Word
from custody.settings import Settings
from tests.helpers import StandInEngine

DPI = 200


class _MissesALine(StandInEngine):
    """The real engine, wrapped (a fault injected on purpose): words whose centre lies in
    the band ``rows`` are dropped, as PP-OCRv6's detector dropped a whole fax line."""

    def __init__(self, engine: OcrEngine, rows: tuple[int, int]) -> None:
        self._engine, self._rows = engine, rows

    def recognise(self, image: GrayPage, page: int) -> PageText:
        read = self._engine.recognise(image, page)
        top, bottom = self._rows
        kept = [w for w in read.words if not top <= _middle(w) <= bottom]
        return read.model_copy(update={"words": kept, "text": " ".join(w.text for w in kept)})


def test_redaction_check_second_reader_paints_a_line_the_workers_engine_never_saw(
    letter: tuple[list[GrayPage], list[PageText]], ocr_engine: OcrEngine
) -> None:
    """The birth-date line gone from the workers' reading, plan and check alike: alone the
    check keeps a view that shows the date; with its second reader the date is painted."""
    images, pages = letter
    dob = [
        r for r in make_plan(pages, None, DEFAULT_REDACTION).regions if r.source == "date_of_birth"
    ]
    assert dob, "the letter prints a birth date beside its label"
    rows = (dob[0].box[1], dob[0].box[3])
    blind_engine = _MissesALine(ocr_engine, rows)
    blind = [blind_engine.recognise(image, n) for n, image in enumerate(images)]
    assert not [
        r for r in make_plan(blind, None, DEFAULT_REDACTION).regions if r.source == "date_of_birth"
    ]
    date = [
        w.text
        for w in pages[0].words
        if rows[0] <= _middle(w) <= rows[1] and any(c.isdigit() for c in w.text)
    ]
    assert date, "the date's words were read in the source"
    bench = TesseractEngine(1)  # the bench's own reading, psm 3: another mode than the check's

    def shown(pdf: bytes) -> bool:
        text = normal(" ".join(read_surfaces(pdf, bench, DPI).ocr))
        return any(normal(d) in text for d in date)

    alone = make_view(enumerate(images), blind, None, DEFAULT_REDACTION, blind_engine, DPI)
    assert shown(alone.pdf), "without a second reader the check keeps the date readable"
    second = build_checker(Settings())
    made = make_view(enumerate(images), blind, None, DEFAULT_REDACTION, blind_engine, DPI, second)
    assert ("recheck", "date_of_birth") in {(r.reason, r.source) for r in made.plan.regions}
    assert not shown(made.pdf)
    assert made.report.engine == f"stand-in+{second.name}" and made.surfaces.second_pages


def _middle(word: Word) -> float:
    ys = [y for _, y in word.box]
    return (min(ys) + max(ys)) / 2
