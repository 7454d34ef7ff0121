"""Extraction on words the real default OCR engine reads, computed at test time (nothing committed).

One drawn referral, one SROIE receipt and two FUNSD forms are recognised once
per session; the receipt's truth and the tuning form's links are read from
the corpus annotations in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from activities.engines.selection import build_engine
from activities.fields import extract
from activities.fields.marks import find_marks
from activities.fields.normalise import decimal_text, iso_date
from custody.fields import DocType
from custody.models import PageText
from custody.settings import Settings
from starter.bench.pairs import PairTally, links_for
from starter.bench.referrals import generate

CORPUS = Path("/work/shared/corpus/ocr_gt")
RECEIPT, FORM = "sroie_022", "funsd_82092117"
#: A forms_dev form the linkers were tuned on (labels in a column, a table): a guard.
DEV_FORM = CORPUS.parent / "forms_dev" / "funsd_0001209043.png"


@pytest.fixture(scope="module")
def read() -> Iterator[dict[str, list[PageText]]]:
    if not (CORPUS / f"{RECEIPT}.jpg").exists():
        pytest.skip("the research corpus is not on this machine")
    engine = build_engine(Settings())
    images = {
        "referral": [np.asarray(p.convert("L")) for p in generate(0, 7).pages],
        RECEIPT: [np.asarray(Image.open(CORPUS / f"{RECEIPT}.jpg").convert("L"))],
        FORM: [np.asarray(Image.open(CORPUS / f"{FORM}.png").convert("L"))],
        DEV_FORM.stem: [np.asarray(Image.open(DEV_FORM).convert("L"))],
    }
    # As the OCR activity does: the engine's words, then the page's checkboxes.
    yield {
        stem: [
            engine.recognise(image, n).model_copy(update={"marks": find_marks(image)})
            for n, image in enumerate(pages)
        ]
        for stem, pages in images.items()
    }
    close = getattr(engine, "close", None)
    if close is not None:
        close()


def test_extract_classifies_real_pages(read: dict[str, list[PageText]]) -> None:
    """Undeclared, a referral, a receipt and a FUNSD form each get their own type."""
    kinds = {stem: extract(pages).classification for stem, pages in read.items()}
    assert kinds["referral"].type == DocType.REFERRAL
    assert kinds[RECEIPT].type == DocType.RECEIPT
    assert kinds[FORM].type == kinds[DEV_FORM.stem].type == DocType.FORM
    assert all(k.how == "classified" for k in kinds.values())


def test_extract_reads_a_drawn_referral_exactly(read: dict[str, list[PageText]]) -> None:
    """The drawn referral's date, participant ID and consent match its truth."""
    truth = generate(0, 7).truth
    fields = extract(read["referral"]).fields
    for name in ("referral_date", "participant_id", "consent"):
        assert (fields[name].status, fields[name].value) == ("found", truth[name])


def test_extract_reads_a_receipts_date_and_total(read: dict[str, list[PageText]]) -> None:
    """The SROIE receipt's date and total match its annotation, in normal form."""
    key = json.loads((CORPUS / "_annotations" / f"{RECEIPT}.key.json").read_text())
    fields = extract(read[RECEIPT]).fields
    assert fields["date"].value == iso_date(key["date"])
    assert fields["total"].value == decimal_text(key["total"])


def test_extract_pairs_questions_and_answers_on_a_form(read: dict[str, list[PageText]]) -> None:
    """A FUNSD form gives key-value pairs, each key ending where its colon was."""
    pairs = extract(read[FORM]).pairs
    assert pairs
    assert all(p.key and p.value and p.page == 0 for p in pairs)


def test_extract_pairs_a_tuning_form_as_funsd_links_it(read: dict[str, list[PageText]]) -> None:
    """On a form of labels and a table, end to end from OCR: most links, hardly a wrong pair."""
    tally = PairTally()
    tally.add(links_for(DEV_FORM) or [], extract(read[DEV_FORM.stem]).pairs)
    figures = tally.figures()
    assert figures["expected"] == 60
    assert figures["correct"] >= 25 and figures["precision"] >= 0.9
