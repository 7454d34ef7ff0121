"""Readings a label seemed to single out but did not: a label's printed alternative, another
label's line under it, the next row of a list, a date whose day and month could swap on a
page that prints months first, a name with a misread capital. Each goes to review or to its
real value, never out as a wrong one."""

from __future__ import annotations

from activities.fields import extract
from activities.fields.normalise import day_first, day_month_swappable, month_first
from custody.fields import DocType, FoundField
from tests.activities.fields.pages import Row, placed


def _field(rows: list[Row], name: str) -> FoundField:
    return extract([placed(rows)], declared=DocType.REFERRAL).fields[name]


def test_reason_skips_the_labels_printed_alternative_after_a_slash() -> None:
    """ "Provisional diagnosis / Differential" is one label: the value is the line under it."""
    for alternative in ([("/", 520), ("Differential", 550)], [("/Differential", 520)]):
        found = _field(
            [
                [("Provisional", 100), ("diagnosis", 320), *alternative],
                [("Recurrent", 100), ("chest", 300), ("tightness", 420), ("on", 620)],
            ],
            "reason",
        )
        assert found.value != "Differential"
        assert (found.status, found.value) == ("found", "Recurrent chest tightness on")


def test_reason_is_not_another_labels_line_under_it() -> None:
    """A line under the label that starts with a label of its own ("Remark:") is not its value."""
    found = _field(
        [
            [("Presenting", 100), ("concern", 330)],
            [("Remark:", 100), ("the", 260), ("family", 340), ("agree", 480), ("to", 600)],
        ],
        "reason",
    )
    assert found.status != "found"
    assert found.value is None


def test_reason_far_right_is_kept_when_the_words_under_the_label_are_the_next_row() -> None:
    """In a two-column list the words under a label with a far-right value are the next row's
    label ("Follow-up visit ... 01.04.2026"), not the value."""
    found = _field(
        [
            [("Clinical", 100), ("details", 280), ("Worsening", 700), ("ankle", 900)],
            [("Follow-up", 100), ("visit", 320), ("01.04.2026", 700)],
        ],
        "reason",
    )
    assert found.value != "Follow-up visit"
    assert (found.status, found.value) == ("found", "Worsening ankle")


def test_date_under_its_label_is_read_though_a_neighbour_column_is_far_right() -> None:
    """In a grid the value under a label holds a digit, so it is no next row's label: the
    neighbouring column's cells either side of it change nothing (a guard for the rule above)."""
    found = _field(
        [
            [("Referral", 100), ("Date", 280), ("East", 900), ("Wing", 1000)],
            [("17/01/2026", 100), ("Level", 900), ("Two", 1020)],
        ],
        "referral_date",
    )
    assert (found.status, found.value, found.method) == ("found", "2026-01-17", "anchor:below")


def test_swappable_date_goes_to_review_on_a_page_that_prints_months_first() -> None:
    """04/05/2026 beside a DOB only month first reads (11/23/1970) may be April or May:
    review, never a guess. Under its own label's "(MM/DD/YYYY)" note it is April 5th, as
    the note says; a note elsewhere on the page leaves it unsure."""
    noted = [[("Referral", 100), ("Date", 280), ("(MM/DD/YYYY):", 400), ("04/05/2026", 760)]]
    assert (_field(noted, "referral_date").status, _field(noted, "referral_date").value) == (
        "found",
        "2026-04-05",
    )
    beside = [
        [("Referral", 100), ("Date:", 280), ("04/05/2026", 760)],
        [("Date", 100), ("of", 200), ("Birth", 260), ("(MM/DD/YYYY):", 400), ("11/03/1970", 760)],
    ]
    found = _field(beside, "referral_date")
    assert (found.status, found.value) == ("review", None)
    beside[1][-1] = ("11/23/1970", 760)
    found = _field(beside, "referral_date")
    assert (found.status, found.value) == ("review", None)


def test_swappable_date_is_read_day_first_where_nothing_says_months_come_first() -> None:
    """The same date on a page whose other dates read day first is published, day first."""
    found = _field(
        [
            [("Referral", 100), ("Date:", 280), ("04/05/2026", 760)],
            [("Date", 100), ("of", 200), ("Birth:", 260), ("23/11/1970", 760)],
        ],
        "referral_date",
    )
    assert (found.status, found.value) == ("found", "2026-05-04")


def test_swappable_date_goes_to_review_where_nothing_says_which_comes_first() -> None:
    """04/07/2026 on a page with no other date and no format note may be April or July
    (a US referral prints it month first): review, never a guess; 14/07/2026 is sure."""
    for date, want in (("04/07/2026", ("review", None)), ("14/07/2026", ("found", "2026-07-14"))):
        found = _field([[("Referral", 100), ("Date:", 280), (date, 760)]], "referral_date")
        assert (found.status, found.value) == want


def test_month_first_and_swappable_read_the_printed_forms() -> None:
    """The page-level evidence and the per-value doubt, on their own."""
    assert day_first("Date (DD/MM/YYYY): 04/05/2026") and day_first("DD MM YYYY")
    assert day_first("Born 23/11/1970") and not day_first("Seen 04/05/2026")
    assert not day_first("Seen 12/31/2025")
    assert month_first("DOB (mm-dd-yy): 01-02-99")
    assert month_first("Seen 12/31/2025")
    assert not month_first("Seen 31/12/2025, next 04/05/2026")
    assert day_month_swappable("04/05/2026")
    assert not day_month_swappable("04/04/2026")
    assert not day_month_swappable("13/05/2026")


def test_clinician_with_a_lower_case_name_word_needs_review() -> None:
    """ "Dr. lvan Petrov" (a capital I read as l) is held for review; a particle is not."""

    def clinician(*name: tuple[str, int]) -> FoundField:
        return _field([[("Referring", 100), ("clinician:", 300), *name]], "clinician")

    misread = clinician(("Dr.", 560), ("lvan", 640), ("Petrov", 760))
    assert (misread.status, misread.value) == ("review", None)
    assert clinician(("Dr.", 560), ("Ivan", 640), ("Petrov", 760)).value == "Dr. Ivan Petrov"
    particle = clinician(("Dr.", 560), ("Anna", 640), ("van", 740), ("Dijk", 820))
    assert particle.value == "Dr. Anna van Dijk"
