"""Referral fields read beside their labels: distractors, review, consent marks."""

from __future__ import annotations

import numpy as np

from activities.fields import extract
from activities.fields.marks import find_marks
from custody.fields import DocType
from custody.models import Mark, PageText, Word
from starter.bench.referrals import generate
from tests.activities.fields.pages import placed, row_of

_page = placed


def test_extract_takes_referral_date_not_date_of_birth_beside_it() -> None:
    """The date of birth printed first and beside the referral date is never taken for it."""
    page = _page(
        [
            [("Date", 100), ("of", 200), ("Birth:", 260), ("02/03/1961", 700)],
            [("Referral", 100), ("Date:", 280), ("14/03/2026", 700)],
            [("Fax", 100), ("date:", 180), ("16/03/2026", 700)],
        ]
    )
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("found", "2026-03-14")


def test_extract_takes_participant_id_not_mrn_on_the_same_line() -> None:
    """A letter's "Participant ID: P-00421   MRN: 1234567" gives the ID, never the MRN."""
    page = _page(
        [[("Participant", 100), ("ID:", 340), ("P-00421", 420), ("MRN:", 700), ("1234567", 820)]]
    )
    found = extract([page], declared=DocType.REFERRAL).fields["participant_id"]
    assert (found.status, found.value, found.method) == ("found", "P-00421", "anchor:right-of")


def test_extract_reads_a_grid_value_below_its_label() -> None:
    """In a boxed grid the value printed under its label is read; the neighbour cell is not."""
    page = _page(
        [
            [("Participant", 100), ("Identifier", 340), ("MRN", 900)],
            [("P008186", 100), ("7654321", 900)],
        ]
    )
    found = extract([page], declared=DocType.REFERRAL).fields["participant_id"]
    assert (found.value, found.method) == ("P008186", "anchor:below")


def test_extract_sends_unsure_values_to_review_without_a_value() -> None:
    """A value OCR read with low confidence needs review and carries no value at all."""
    page = _page([[("Referral", 100), ("Date:", 280), ("14/03/2026", 700)]], conf=0.6)
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("review", None)
    assert found.confidence < 0.85


def test_extract_reports_missing_fields_as_missing() -> None:
    """A field whose label is nowhere is missing, not review."""
    page = _page([[("Referral", 100), ("Date:", 280), ("14/03/2026", 700)]])
    fields = extract([page], declared=DocType.REFERRAL).fields
    assert fields["participant_id"].status == "missing"
    assert fields["consent"].status == "missing"


def _consent_page(yes_ink: float, no_ink: float) -> PageText:
    marks = [
        Mark(box=[440, 100, 470, 130], ink=yes_ink),
        Mark(box=[600, 100, 630, 130], ink=no_ink),
    ]
    return _page([[("Consent", 100), ("given:", 280), ("Yes", 482), ("No", 642)]], marks=marks)


def test_extract_reads_consent_from_the_marked_box() -> None:
    """Consent is the option whose box is inked while the other's is empty."""
    yes = extract([_consent_page(0.5, 0.0)], declared=DocType.REFERRAL).fields["consent"]
    no = extract([_consent_page(0.0, 0.35)], declared=DocType.REFERRAL).fields["consent"]
    assert (yes.status, yes.value, yes.method) == ("found", True, "checkbox")
    assert (no.status, no.value) == ("found", False)


def test_extract_sends_unreadable_consent_marks_to_review() -> None:
    """Both boxes marked, or a smudge, is review: consent is never guessed."""
    for inks in ((0.5, 0.4), (0.06, 0.0), (0.0, 0.0)):
        found = extract([_consent_page(*inks)], declared=DocType.REFERRAL).fields["consent"]
        assert (found.status, found.value) == ("review", None)


def test_find_marks_sees_the_ticked_and_crossed_boxes_of_a_referral() -> None:
    """On drawn referrals exactly one of the two consent boxes is inked: the truth's."""
    for index in (0, 6, 8, 13):  # list/cross, letter/tick, list/tick, grid/cross (seed 7)
        referral = generate(index, 7)
        marks = find_marks(np.asarray(referral.pages[-1].convert("L")))
        consent = sorted((m for m in marks if m.box[2] - m.box[0] >= 20), key=lambda m: m.box[0])
        assert len(consent) == 2
        inked = [m.ink > 0.1 for m in consent]
        assert inked == [bool(referral.truth["consent"]), not referral.truth["consent"]]


def _tilted(words: list[tuple[str, int]], y: int, slope: float) -> list[Word]:
    """Words along one printed line that drops ``slope`` pixels per pixel across the page."""
    placed = []
    for text, x in words:
        w, top = 20 * len(text), y + slope * x
        box = [[x, top], [x + w, top + slope * w], [x + w, top + slope * w + 30], [x, top + 30]]
        placed.append(Word(text=text, confidence=0.99, box=[[int(a), int(b)] for a, b in box]))
    return placed


def test_extract_keeps_a_skewed_line_whole() -> None:
    """On a scan skewed 4 degrees the value far right of its label is still its value."""
    slope = 0.07
    words = [
        *_tilted([("Referral", 100), ("Date:", 280), ("14/03/2026", 1200)], 100, slope),
        *_tilted([("Date", 100), ("of", 200), ("Birth:", 260), ("02/03/1961", 1200)], 160, slope),
    ]
    page = PageText(
        page=0, width=1700, height=2200, text="", words=words, mean_confidence=0.99, seconds=0.0
    )
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("found", "2026-03-14")


def test_extract_sends_a_value_under_a_rubber_stamp_to_review() -> None:
    """A rubber stamp printed over a value may have eaten a letter: review, not a value."""
    clean = _page([[("Reason:", 100), ("Persistent", 700), ("knee", 920), ("pain", 1020)]])
    stamp = Word(
        text="RECEIVED", confidence=0.99, box=[[760, 135], [920, 135], [920, 165], [760, 165]]
    )
    stamped = clean.model_copy(update={"words": [*clean.words, stamp]})
    assert extract([clean], declared=DocType.REFERRAL).fields["reason"].status == "found"
    found = extract([stamped], declared=DocType.REFERRAL).fields["reason"]
    assert (found.status, found.value) == ("review", None)


def test_extract_is_deterministic() -> None:
    """The same pages give the same extraction, field for field."""
    page = _consent_page(0.5, 0.0)
    assert extract([page]) == extract([page])


def _reason(words: list[str], conf: float) -> tuple[str, object]:
    row = [("Reason", 100), ("for", 260), ("referral:", 340)]
    x = 700
    for word in words:
        row.append((word, x))
        x += 20 * len(word) + 20  # one space between words
    found = extract([_page([row], conf=conf)], declared=DocType.REFERRAL).fields["reason"]
    return found.status, found.value


def test_reason_in_dictionary_words_is_published_though_ocr_was_less_sure() -> None:
    """Dictionary words OCR read at 0.93 corroborate each other: the reason is published."""
    assert _reason(["Persistent", "knee", "pain"], 0.93) == ("found", "Persistent knee pain")


def test_reason_with_an_unknown_word_ocr_was_not_sure_of_needs_review() -> None:
    """A misread no dictionary knows ("Persisient"), read at 0.93, is review, never a value."""
    assert _reason(["Persisient", "knee", "pain"], 0.93) == ("review", None)


def test_reason_with_a_digit_read_for_a_letter_needs_review() -> None:
    """ "Pers1stent" is a visible slip that no known word repairs: review, though OCR was sure."""
    assert _reason(["Pers1stent", "knee", "pain"], 0.99) == ("review", None)


def test_a_reason_that_wraps_is_read_with_the_lines_it_runs_onto() -> None:
    """A reason continued on the line under it, in its own column, is read whole, up to
    the full stop; the label under that is no part of it."""
    page = placed(
        [
            [("Referral", 100), ("Date:", 280), ("14/03/2026", 700)],
            [
                ("Reason", 100),
                ("for", 260),
                ("referral:", 340),
                *row_of("Persistent knee pain after", 700),
            ],
            row_of("a fall, worse on stairs.", 700),
            [("Clinician:", 100), ("Dr", 700), ("Ames", 760)],
        ],
        dy=50,
    )
    found = extract([page], declared=DocType.REFERRAL).fields["reason"]
    assert (found.status, found.value) == (
        "found",
        "Persistent knee pain after a fall, worse on stairs",
    )


def test_a_reason_cut_at_the_pages_edge_with_nothing_under_it_needs_review() -> None:
    """A reason that runs unclosed to the page's right text edge, with a label on the
    next line, lost words nobody can see: review, never the part that was read."""

    def reason(last: str) -> tuple[str, object]:
        page = placed(
            [
                [("Referral", 100), ("Date:", 280), ("14/03/2026", 1300)],
                [
                    ("Reason", 100),
                    ("for", 260),
                    ("referral:", 340),
                    *row_of(f"Persistent knee pain after a fall on {last}", 700),
                ],
                [("Clinician:", 100), ("Dr", 1300), ("Ames", 1360)],
                [("Clinic:", 100), ("Northgate", 1300)],
            ],
            dy=50,
        )
        found = extract([page], declared=DocType.REFERRAL).fields["reason"]
        return found.status, found.value

    assert reason("the") == ("review", None)
    assert reason("ice.") == ("found", "Persistent knee pain after a fall on ice")


def test_a_reason_run_in_after_its_label_wraps_under_the_label_only_where_its_line_was_full() -> (
    None
):
    """ "Reason for referral: ... and the" / "cohort study." in a letter: the value's line
    ran out of room (the next line's first word would not have fitted), so the line under
    the label goes on with it; a short reason followed by another paragraph does not."""
    body = "Please see this patient soon, the family have asked twice already."

    def reason(value: str, after: str) -> tuple[str, object]:
        page = placed(
            [
                row_of(body, 100),
                row_of(body, 100),
                [("Reason", 100), ("for", 260), ("referral:", 340), *row_of(value, 540)],
                row_of(after, 100),
                row_of(body, 100),
            ],
            dy=50,
        )
        found = extract([page], declared=DocType.REFERRAL).fields["reason"]
        return found.status, found.value

    wrapped = reason("Memory concerns raised by her daughter for the", "cohort study.")
    assert wrapped == ("found", "Memory concerns raised by her daughter for the cohort study")
    short = reason("Memory concerns", "Her daughter will come too.")
    assert short == ("found", "Memory concerns")


def test_a_reason_in_a_label_list_never_runs_onto_the_next_rows_label() -> None:
    """In a list, the line under a reason is the next row: its label stands under the
    reason's label, whether or not a label list knows it ("Practice / clinic"), and a
    row whose first words end in a colon is a label's even run in ("SHARING.:")."""
    filler = "Please see this patient soon, the family have asked twice already."

    def reason(first: list[tuple[str, int]], second: list[tuple[str, int]]) -> object:
        rows = [row_of(filler, 100), row_of(filler, 100), first, second, row_of(filler, 100)]
        page = placed(rows, dy=50)
        return extract([page], declared=DocType.REFERRAL).fields["reason"].value

    listed = [("Clinical", 100), ("question", 280), *row_of("Suspected sleep apnoea", 900)]
    next_row = [*row_of("Practice / clinic", 100), *row_of("Coldharbour Sleep Service", 900)]
    assert reason(listed, next_row) == "Suspected sleep apnoea"
    run_in = [("Reason:", 100), *row_of("Possible early-onset memory decline in the", 280)]
    assert reason(run_in, row_of("AGREES TO SHARING.: Does not agree", 100)) == (
        "Possible early-onset memory decline in the"
    )


def test_a_reason_stops_at_a_code_under_it_and_at_the_next_cells_label() -> None:
    """A diagnosis code printed under the reason ("R41.3") is a cell's, not the reason's
    next line; and a value under its label wraps no further apart than it sits from the
    label: the next cell's label after a wider gap ("Dx code.") is no part of it."""
    coded = placed(
        [
            [("Working", 100), ("diagnosis", 260), *row_of("Chronic low back pain", 700)],
            [("R41.3", 700)],
        ],
        dy=50,
    )
    found = extract([coded], declared=DocType.REFERRAL).fields["reason"]
    assert (found.status, found.value) == ("found", "Chronic low back pain")
    celled = placed(
        [
            [("Main", 100), ("problem", 200)],
            row_of("New-onset atrial fibrillation, rate controlled", 100),
            [],
            [("Dx", 100), ("code.", 160)],
        ],
        dy=32,
    )
    found = extract([celled], declared=DocType.REFERRAL).fields["reason"]
    assert found.value == "New-onset atrial fibrillation, rate controlled"
