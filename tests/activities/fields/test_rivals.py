"""A value goes out above its bar only when the page's evidence singles it out (issue #27)."""

from __future__ import annotations

import pytest

from activities.fields import extract, unbarred
from activities.fields.choose import MOST, UNSINGLED, Reading, decide
from activities.fields.layout import Token, page_lines
from activities.fields.referral import BARS
from custody.fields import DocType, FoundField
from tests.activities.fields.pages import flowing, placed


def _fields(*rows: str) -> dict[str, FoundField]:
    return extract([flowing(list(rows))], declared=DocType.REFERRAL).fields


def test_unsingled_is_below_every_referral_bar() -> None:
    """The most a reading no label singles out may be is under every field's bar."""
    assert all(bar > UNSINGLED for bar in BARS.values())
    assert UNSINGLED < MOST


def _words() -> tuple[Token, ...]:
    return page_lines(flowing(["Castlegate Surgery"]))[0].tokens


def test_decide_holds_a_reading_by_position_alone_below_the_bar() -> None:
    """However sure OCR was, a reading found by position alone goes to review."""
    sure = Reading("2026-03-14", _words(), 0.99, "letter:date", anchored=False)
    found = decide("referral_date", [sure], 0.9, seen=True)
    assert (found.status, found.value, found.confidence) == ("review", None, UNSINGLED)


def test_decide_prefers_a_labelled_reading_to_a_surer_positional_one() -> None:
    """A labelled reading at 0.92 outranks a heading at 0.97: only the label says which field."""
    heading = Reading("Castlegate Surgery", _words(), 0.97, "heading", anchored=False)
    labelled = Reading("Castlegate Surgery", _words(), 0.92, "anchor:right-of")
    found = decide("referring_clinic", [heading, labelled], 0.9, seen=True)
    assert (found.status, found.method) == ("found", "anchor:right-of")


def test_a_generic_date_label_among_unexplained_dates_goes_to_review() -> None:
    """ "Date:" says a date, not which: with another date no label explains, it is review."""
    fields = _fields("Date: 14/03/2026", "Clinic appointment booked 21/04/2026 at Lakeside.")
    found = fields["referral_date"]
    assert (found.status, found.value) == ("review", None)
    assert unbarred([flowing(["Date: 14/03/2026", "Seen 21/04/2026."])])["referral_date"].value


def test_a_value_below_its_label_with_a_rival_as_near_goes_to_review() -> None:
    """Under "Referral date" sits one date, and another unlabelled one sits as near: unsure."""
    page = placed(
        [
            [("Referral", 100), ("date", 280)],
            [("14/03/2026", 100), ("21/04/2026", 380)],
        ],
        dy=45,
    )
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("review", None)


def test_a_value_below_its_label_alone_is_published() -> None:
    """A grid's date under "Referral date", no rival near: the label singles it out."""
    page = placed([[("Referral", 100), ("date", 280)], [("14/03/2026", 100)]], dy=45)
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("found", "2026-03-14")


def test_a_sentence_gives_the_referral_date_after_its_cue() -> None:
    """ "I am referring ..., born ..., on 3rd March 2026": the date after "on", not the birth."""
    found = _fields(
        "Dear Dr Marsh,",
        "I am referring Mrs Jane Doe, born 02/05/1961, on 3rd March 2026 for review.",
    )["referral_date"]
    assert (found.status, found.value, found.method) == ("found", "2026-03-03", "sentence:date")


def test_a_sentence_date_of_another_event_is_not_the_referral_date() -> None:
    """ "I am referring her, whom I saw on 2 March 2026": a visit's date, never the referral's."""
    found = _fields("I am referring her, whom I saw on 2 March 2026, for review.")
    assert found["referral_date"].value is None


def test_a_sentence_gives_the_participant_id_after_its_cue() -> None:
    """ "participant ABC-123 in the ASPIRE study": the identifier straight after the cue."""
    found = _fields("She is participant ABC-123 in the ASPIRE study.")["participant_id"]
    assert (found.status, found.value, found.method) == (
        "found",
        "ABC-123",
        "sentence:identifier",
    )


def test_a_sentence_year_after_a_study_word_is_no_identifier() -> None:
    """ "the participant 2026 cohort": a year after the cue is not a participant's identifier."""
    found = _fields("She joined the participant 2026 cohort last spring.")["participant_id"]
    assert found.value is None


def test_new_label_wordings_are_read() -> None:
    """Wordings clinicians print: "Requesting physician", "Subj. No.", "RFR", "Appt date"."""
    fields = _fields(
        "Requesting physician: Dr Alan Marsh",
        "Subj. No.: SUB-0042",
        "RFR: Persistent cough.",
        "Appt date: 21/04/2026",
        "Date of referral: 14/03/2026",
    )
    read = {name: f.value for name, f in fields.items()}
    assert read["clinician"] == "Dr Alan Marsh"
    assert read["participant_id"] == "SUB-0042"
    assert read["reason"] == "Persistent cough"
    assert read["referral_date"] == "2026-03-14"


def test_a_date_far_right_of_its_label_with_a_rival_as_near_goes_to_review() -> None:
    """A list's value column: "Referral date        14/03/2026" with a loose date on the next
    line nearer the label than the value is: the label does not single either out."""
    page = placed([[("Referral", 100), ("date", 280), ("14/03/2026", 560)], [("21/04/2026", 400)]])
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("review", None)


def test_a_value_two_labels_point_at_goes_to_review() -> None:
    """A date under "Referral date" and right of "Born:" is claimed twice: whose is unsure."""
    page = placed(
        [[("Referral", 200), ("date", 380)], [("Born:", 100), ("14/03/2026", 220)]], dy=45
    )
    found = extract([page], declared=DocType.REFERRAL).fields["referral_date"]
    assert (found.status, found.value) == ("review", None)


#: One page of lines, the field read, and what must come of it: (status, value).
_READINGS = {
    # The date beside "DOB" is explained by its own label, so "Date:" singles out the other.
    "generic label, rivals labelled": (
        ("DOB: 02/05/1961", "Date: 14/03/2026"),
        "referral_date",
        ("found", "2026-03-14"),
    ),
    # "Referral date:" names its value, whatever other dates the page holds.
    "specific label among rivals": (
        ("Referral date: 14/03/2026", "Seen in clinic on 02/01/2026."),
        "referral_date",
        ("found", "2026-03-14"),
    ),
    # A label one letter off ("Refenral date") with a rival date on the page is not sure.
    "misread label among rivals": (
        ("Refenral date: 14/03/2026", "Seen in clinic on 02/01/2026."),
        "referral_date",
        ("review", None),
    ),
    # "GP:" names the patient's doctor, who may not refer: with another doctor named, review.
    "GP label, another doctor named": (
        ("GP: Dr Alan Marsh", "Please contact Dr Priya Nair with any questions."),
        "clinician",
        ("review", None),
    ),
    # Two sentences naming two participant numbers: which one is unsure.
    "two sentence identifiers": (
        (
            "She is participant ABC-123 in the ASPIRE study.",
            "Her husband is participant ABC-456 in the same study.",
        ),
        "participant_id",
        ("review", None),
    ),
    # "Receiving Consultant": dictionary words throughout, no title: a heading, not a name.
    "heading as an untitled name": (
        ("Referring clinician: Receiving Consultant",),
        "clinician",
        ("review", None),
    ),
    # A word no dictionary knows reads as a name.
    "untitled name with a surname": (
        ("Referred by: Siobhan Okafor",),
        "clinician",
        ("found", "Siobhan Okafor"),
    ),
    # "Cardiology Outpatients": a department, maybe, not surely a clinic.
    "clinic without an institution word": (
        ("Referring clinic: Cardiology Outpatients",),
        "referring_clinic",
        ("review", None),
    ),
    # "Dr Anna Okafor" and a signature "Dr Anna Okafur": one is misread.
    "name spelt two ways": (
        ("Referred by: Dr Anna Okafor", "Yours sincerely,", "Dr Anna Okafur"),
        "clinician",
        ("review", None),
    ),
    # The label's name and the signature agree: nothing contests it.
    "name spelt the same twice": (
        ("Referred by: Dr Anna Okafor", "Yours sincerely,", "Dr Anna Okafor"),
        "clinician",
        ("found", "Dr Anna Okafor"),
    ),
    # The name, not the clinic after the comma.
    "comma ends a name": (
        ("Referred by: Dr A. Jones, Castlegate Surgery",),
        "clinician",
        ("found", "Dr A. Jones"),
    ),
    # The role run into the name makes it unsure.
    "role word in a name": (("Referred by: Dr Anna Jones GP",), "clinician", ("review", None)),
}


@pytest.mark.parametrize(("rows", "name", "wanted"), _READINGS.values(), ids=_READINGS.keys())
def test_a_page_of_lines_reads_as_its_evidence_allows(
    rows: tuple[str, ...], name: str, wanted: tuple[str, str | None]
) -> None:
    """Each page's field is published only where its label singles the value out."""
    found = _fields(*rows)[name]
    assert (found.status, found.value) == wanted
