"""The one layout model: the lines published text, fields and redaction all read."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from activities.engines.base import OcrEngine
from activities.fields.layout import page_lines as field_lines
from activities.pages.layout import page_lines, reading_text
from activities.redact.lines import page_lines as redaction_lines
from custody.models import PageText, Word
from tests.activities.fields.pages import Row, placed, row_of

DISCHARGE = (
    "NORTHWIND COMMUNITY CLINIC - DISCHARGE SUMMARY",
    "Patient: Test Patient Beta",
    "Allergies: penicillin - none known; latex - rash",
    "Discharged: 2024-02-05",
    "Complete the full course of antibiotics.",
    "Discharging clinician: Dr. Sample Physician",
)


def _scan(lines: tuple[str, ...], angle: float) -> np.ndarray:
    """The lines drawn at 34 px on a 200-dpi page, turned by ``angle`` degrees."""
    image = Image.new("L", (1700, 120 + 60 * len(lines)), 235)
    draw = ImageDraw.Draw(image)
    for n, text in enumerate(lines):
        draw.text((70, 70 + 60 * n), text, fill=25, font=ImageFont.load_default(size=34))
    turned = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=235)
    return np.asarray(turned)


@pytest.mark.parametrize("angle", [-0.8, 0.0, 0.5, 3.0])
def test_reading_text_keeps_every_line_of_a_scanned_discharge_whole(
    ocr_engine: OcrEngine, angle: float
) -> None:
    """Read by the default engine, skewed or not, each printed line is one published line."""
    page = ocr_engine.recognise(_scan(DISCHARGE, angle), 0)
    assert page.text.splitlines() == list(DISCHARGE)
    assert reading_text(page.words) == page.text


def test_fields_redaction_and_text_see_the_same_lines(ocr_engine: OcrEngine) -> None:
    """The field readers, the redaction detectors and the published text group words alike."""
    page = ocr_engine.recognise(_scan(DISCHARGE, 0.5), 0)
    published = page.text.splitlines()
    assert [line.text for line in redaction_lines(page)] == published
    assert [" ".join(t.text for t in line.tokens) for line in field_lines(page)] == published


def _words(rows: list[Row], *, step: int = 50) -> list[Word]:
    """Row ``n`` at y = 100 + step*n, each word at its x, 18 px a letter and 30 px high."""
    return placed(rows, dy=step, conf=0.9, letter=18).words


def _page(words: list[Word]) -> PageText:
    return PageText(
        page=0, width=1700, height=2200, text="", words=words, mean_confidence=0.9, seconds=0.0
    )


def test_reading_text_reads_prose_columns_one_after_the_other() -> None:
    """Two columns of prose read left column down, then right; the heading above stays whole."""
    left = [
        "the patient was seen in clinic",
        "on a Tuesday and reported pain",
        "in both knees since the spring",
    ]
    right = [
        "she would like a review of her",
        "medication and a plan for the",
        "physiotherapy she was offered",
    ]
    rows = [[("Clinic", 100), ("letter", 230), ("heading", 360)]]
    for a, b in zip(left, right, strict=True):
        rows.append([*_placed(a, 100), *_placed(b, 900)])
    text = reading_text(_words(rows)).splitlines()
    assert text == ["Clinic letter heading", *left, *right]


def _placed(sentence: str, x: int) -> Row:
    return row_of(sentence, x, letter=18, space=12)


def test_a_label_list_keeps_each_value_on_its_labels_line() -> None:
    """Labels left and values far right are not prose columns: each label keeps its value."""
    rows = [
        [("Referral", 100), ("date:", 260), ("14/03/2026", 800)],
        [("Participant", 100), ("ID:", 320), ("P-00421", 800)],
        [("Date", 100), ("of", 190), ("birth:", 240), ("02/03/1961", 800)],
        [("Referred", 100), ("by:", 260), ("Dr.", 800), ("Amira", 870), ("Haddad", 980)],
    ]
    assert reading_text(_words(rows)).splitlines() == [
        "Referral date: 14/03/2026",
        "Participant ID: P-00421",
        "Date of birth: 02/03/1961",
        "Referred by: Dr. Amira Haddad",
    ]


def test_a_dash_and_a_comma_join_the_line_they_sit_in() -> None:
    """Punctuation read as words of its own (tiny boxes) stays inside its line."""
    words = _words([[("penicillin", 100), ("none", 330), ("known", 430)]])
    dash = Word(text="-", confidence=0.9, box=[[300, 113], [312, 113], [312, 116], [300, 116]])
    comma = Word(text=",", confidence=0.9, box=[[540, 124], [546, 124], [546, 134], [540, 134]])
    lines = page_lines(_page([*words, dash, comma]))
    assert [line.text for line in lines] == ["penicillin - none known ,"]


def test_a_tall_word_beside_two_lines_is_a_line_of_its_own() -> None:
    """A box as tall as two lines does not pull them into one."""
    words = _words([[("first", 100)], [("second", 100)]], step=40)
    tall = Word(text="BIG", confidence=0.9, box=[[600, 100], [700, 100], [700, 170], [600, 170]])
    assert len(page_lines(_page([*words, tall]))) == 3
