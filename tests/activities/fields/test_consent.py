"""Consent as a decision: a value only on agreeing evidence, review on doubt, never a guess."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from activities.engines.base import OcrEngine
from activities.fields import extract
from activities.fields.marks import find_marks
from custody.fields import DocType, FoundField
from custody.models import Mark, PageText
from tests.activities.fields.pages import flowing

_page = flowing


def _consent(page: PageText) -> FoundField:
    return extract([page], declared=DocType.REFERRAL).fields["consent"]


def _box(row: int, ink: float) -> Mark:
    """A box just left of row ``row``'s first word."""
    y = 100 + 80 * row
    return Mark(box=[110, y, 140, y + 30], ink=ink)


def test_consent_not_given_in_a_sentence_is_false_never_true() -> None:
    """The issue's sentence, read as true at 1.0 before: it refuses consent."""
    found = _consent(_page(["Dear colleague,", "Consent to share these notes has NOT been given."]))
    assert (found.status, found.value) == ("found", False)
    assert found.confidence < 1.0


def test_consent_affirming_sentence_is_true() -> None:
    """A sentence that gives consent, with no other evidence, is true."""
    found = _consent(_page(["She has given written consent for this referral to be shared."]))
    assert (found.status, found.value) == ("found", True)


def test_consent_from_the_ticked_statement() -> None:
    """The ticked statement's answer, whichever of the two is ticked."""
    rows = [
        "The patient consents to information being shared",
        "The patient does not consent to information being shared",
    ]
    refused = _consent(_page(rows, [_box(0, 0.0), _box(1, 0.4)]))
    given = _consent(_page(rows, [_box(0, 0.4), _box(1, 0.0)]))
    assert (refused.status, refused.value, refused.method) == ("found", False, "checkbox:statement")
    assert (given.status, given.value) == ("found", True)


def test_consent_with_conflicting_or_unsure_evidence_is_review_without_a_value() -> None:
    """A ticked yes and a refusing sentence, both boxes ticked, a smudge, a double negation."""
    rows = [
        "The patient consents to information being shared",
        "Consent to share these notes has NOT been given.",
    ]
    both = ["The patient consents to sharing", "The patient does not consent to sharing"]
    for page in (
        _page(rows, [_box(0, 0.4)]),
        _page(both, [_box(0, 0.4), _box(1, 0.4)]),
        _page(both, [_box(0, 0.06), _box(1, 0.0)]),
        _page(["She did not decline consent to share."]),
    ):
        found = _consent(page)
        assert (found.status, found.value) == ("review", None)


def test_consent_absent_is_missing_and_unanswered_is_review() -> None:
    """No consent wording anywhere: missing. The question with neither box ticked: review."""
    assert _consent(_page(["Reason for referral: knee pain."])).status == "missing"
    rows = ["The patient consents to sharing", "The patient does not consent to sharing"]
    assert _consent(_page(rows, [_box(0, 0.0), _box(1, 0.0)])).status == "review"


def test_consent_written_as_a_word_after_its_label() -> None:
    """ "Consent: declined" is false; "Consent to share: withheld" is false too."""
    assert _consent(_page(["Consent: declined"])).value is False
    assert _consent(_page(["Consent to share: withheld"])).value is False
    assert _consent(_page(["Consent to share: given"])).value is True


def _drawn(mark: str) -> np.ndarray:
    """A consent section drawn on an A4 page at 200 dpi: two statements, the refusing one ticked."""
    image = Image.new("L", (1654, 2339), 246)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=30)
    for n, (text, marked) in enumerate(
        (
            ("I consent to my records being shared", False),
            ("I do not consent to my records being shared", True),
        )
    ):
        x, y = 130, 100 + 70 * n
        draw.rectangle((x, y, x + 28, y + 28), outline=30, width=3)
        if marked and mark == "cross":
            draw.line((x + 5, y + 5, x + 23, y + 23), fill=30, width=4)
            draw.line((x + 23, y + 5, x + 5, y + 23), fill=30, width=4)
        elif marked:  # a tick that overshoots the box's top, as pens do
            draw.line((x + 5, y + 15, x + 12, y + 26, x + 34, y - 8), fill=30, width=4)
        draw.text((x + 46, y - 2), text, font=font, fill=30)
    return np.asarray(image)


def test_a_ticked_box_read_by_the_engine_gives_consent_its_value(ocr_engine: OcrEngine) -> None:
    """Drawn and read as the OCR activity reads it, a crossed or ticked refusal is false."""
    for mark in ("cross", "tick"):
        image = _drawn(mark)
        page = ocr_engine.recognise(image, 0).model_copy(update={"marks": find_marks(image)})
        found = _consent(page)
        assert (found.status, found.value) == ("found", False), mark
