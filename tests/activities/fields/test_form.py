"""Generic form pairs found by layout: beside a colon, a column of labels, tables, ticked boxes."""

from __future__ import annotations

from activities.fields import extract
from activities.fields.form import PRECISION, read_pairs
from activities.fields.layout import page_lines
from custody.fields import FormPair
from custody.models import Mark, PageText
from tests.activities.fields.pages import placed

_page = placed


def _pairs(page: PageText) -> list[FormPair]:
    return read_pairs(page_lines(page), {0: page.marks})


def _shown(pairs: list[FormPair]) -> set[tuple[str, str, str]]:
    return {(p.key, p.value, p.method) for p in pairs}


def test_form_pairs_a_colon_label_with_the_value_beside_it() -> None:
    """ "Date:" and the date right of it; both boxes; confidence the method's share, under 1."""
    pairs = _pairs(_page([[("Date:", 100), ("14/03/2026", 400)]]))
    assert _shown(pairs) == {("Date", "14/03/2026", "beside")}
    pair = pairs[0]
    assert pair.key_box == [100, 100, 200, 130] and pair.value_box == [400, 100, 600, 130]
    assert pair.confidence == round(PRECISION["beside"] * 0.99, 4) < 1.0


def test_form_leaves_out_a_value_whose_sentence_runs_on() -> None:
    """A value continued on the next line in lower case is left out: where it ends is a guess."""
    rows = [
        [("Suggestion:", 100), ("Discontinue", 400), ("coal", 650), ("tests", 760)],
        [("on", 400), ("licensee", 460), ("samples.", 640)],
    ]
    assert _pairs(_page(rows, dy=36)) == []
    assert _shown(_pairs(_page(rows[:1]))) == {("Suggestion", "Discontinue coal tests", "beside")}


def test_form_reads_a_column_of_labels_without_colons() -> None:
    """Labels down the margin, values in a column right of them: each label with its value."""
    rows = [
        [("Brand", 100), ("SALEM", 500)],
        [("Title", 100), ("HEAD", 500), ("IN", 610), ("WATER", 670)],
        [("Size", 100), ("FULL", 500), ("PAGE", 610)],
    ]
    assert _shown(_pairs(_page(rows))) == {
        ("Brand", "SALEM", "label-column"),
        ("Title", "HEAD IN WATER", "label-column"),
        ("Size", "FULL PAGE", "label-column"),
    }


def test_form_names_a_label_by_its_words_when_it_has_no_colon() -> None:
    """ "Project #" and "Date Sent" are labels by their words; "Smokers" beside a number is not."""
    rows = [
        [("Project", 100), ("#", 260), ("74-80", 500)],
        [("Smokers", 100), ("214", 500)],
        [("Date", 900), ("Sent", 1000), ("4/19/74", 1200)],
    ]
    assert _shown(_pairs(_page(rows))) == {
        ("Project #", "74-80", "named"),
        ("Date Sent", "4/19/74", "named"),
    }


def test_form_links_each_table_cell_to_its_header_and_its_row_label() -> None:
    """A grid's number gets its column header and its row label; a lone figure gets neither."""
    rows = [
        [("SCORE", 400), ("BASE", 700)],
        [("Male", 100), ("2.0", 400), ("51", 700)],
        [("Female", 100), ("0.0", 400), ("46", 700)],
        [("Pages", 100), ("1995", 1200)],
    ]
    pairs = _shown(_pairs(_page(rows)))
    expected = {
        (key, cell, "table")
        for key, cell in [
            ("SCORE", "2.0"),
            ("Male", "2.0"),
            ("BASE", "51"),
            ("Male", "51"),
            ("SCORE", "0.0"),
            ("Female", "0.0"),
            ("BASE", "46"),
            ("Female", "46"),
        ]
    }
    assert {p for p in pairs if p[2] == "table"} == expected
    assert not any("1995" in p[1] for p in pairs)


def test_form_reads_a_ticked_box_in_a_group_only() -> None:
    """One of two boxes inked, the other empty: the inked option is ticked; a lone box is not."""
    group = [Mark(box=[60, 102, 86, 128], ink=0.4), Mark(box=[460, 102, 486, 128], ink=0.0)]
    rows = [[("Domestic", 100), ("Export", 500)], [("Urgent", 100)]]
    alone = [Mark(box=[60, 182, 86, 208], ink=0.5)]
    pairs = _pairs(_page(rows, marks=group + alone))
    assert _shown(pairs) == {("Domestic", "☑", "checkbox")}
    assert pairs[0].value_box == [60, 102, 86, 128]


def test_form_gives_no_pair_read_too_unsurely() -> None:
    """A pair whose words OCR read at 0.5 falls under the bar and is not given at all."""
    assert _pairs(_page([[("Date:", 100), ("14/03/2026", 400)]], conf=0.5)) == []


def test_extract_gives_a_generic_form_its_pairs() -> None:
    """Undeclared and cue-less, a page is a form and its pairs come back with it."""
    page = _page([[("To:", 100), ("Mr.", 300), ("Smith", 380)], [("Fax:", 100), ("555-0100", 300)]])
    read = extract([page])
    assert read.classification.type == "form"
    assert {(p.key, p.value) for p in read.pairs} == {("To", "Mr. Smith"), ("Fax", "555-0100")}
