"""Referral fields beyond one generator's choices: wordings, abbreviations, places, forms."""

from __future__ import annotations

import pytest

from activities.fields import extract, unbarred
from activities.fields.choose import UNSINGLED
from activities.fields.normalise import iso_date
from custody.fields import DocType, FoundField
from tests.activities.fields.pages import placed, row_of


def _line(text: str, x: int = 100) -> list[tuple[str, int]]:
    return row_of(text, x)


def _fields(*rows: list[tuple[str, int]], step: int = 80) -> dict[str, FoundField]:
    return extract([placed(list(rows), dy=step)], declared=DocType.REFERRAL).fields


@pytest.mark.parametrize(
    "label",
    [
        "Study participant:",
        "Subject ID:",
        "Subject No.",
        "Participant ref.",
        "Trial ID",
        "Study no.",
        "Participant #:",
    ],
)
def test_participant_id_under_its_many_names(label: str) -> None:
    """Each wording a study's identifier is printed under finds it, abbreviations included."""
    fields = _fields(_line(f"{label} SUB-2291-07") + _line("NHS No. 485 777 3456", 1000))
    assert (fields["participant_id"].status, fields["participant_id"].value) == (
        "found",
        "SUB-2291-07",
    )


@pytest.mark.parametrize(
    ("label", "field", "value", "want"),
    [
        ("Letter written:", "referral_date", "17/03/2026", "2026-03-17"),
        ("Date request sent:", "referral_date", "17/03/2026", "2026-03-17"),
        ("Sending practice:", "referring_clinic", "Harbour View Surgery", "Harbour View Surgery"),
        ("Unit of origin:", "referring_clinic", "Harbour View Surgery", "Harbour View Surgery"),
        ("Requesting specialist:", "clinician", "Dr Ana Lowe", "Dr Ana Lowe"),
        ("Physician referring:", "clinician", "Dr Ana Lowe", "Dr Ana Lowe"),
        ("Nature of complaint:", "reason", "Persistent knee pain", "Persistent knee pain"),
        ("Clinical concern:", "reason", "Persistent knee pain", "Persistent knee pain"),
    ],
)
def test_labels_by_their_parts_not_one_list_of_wordings(
    label: str, field: str, value: str, want: str
) -> None:
    """A label is known by its parts (what is dated and what was done to it, who or where
    and how a form asks for them, what a referral is about), not only as one of a list
    of wordings seen before."""
    found = _fields(_line(label) + _line(value, 800))[field]
    assert (found.status, found.value) == ("found", want)


@pytest.mark.parametrize(
    "printed", ["SUB/2291-07", "RCT.2024.0117", "P630 306", "PT-0421-A", "KX0042"]
)
def test_identifiers_keep_their_prefixes_and_separators(printed: str) -> None:
    """An identifier is read whole, as printed, spaces inside it included."""
    fields = _fields(_line(f"Subject ID: {printed}") + _line("MRN: 7654321", 1100))
    assert fields["participant_id"].value == printed


@pytest.mark.parametrize(
    "printed",
    [
        "3rd of March, 2026",
        "Tuesday 3 March 2026",
        "03-MAR-2026",
        "3/3/26",
        "March 3, 2026",
        "3.3.2026",
    ],
)
def test_dates_in_the_forms_people_write_them(printed: str) -> None:
    """Ordinals, weekdays, month names in capitals, two-digit years: one ISO date."""
    fields = _fields(_line("Date of birth: 02/03/1961"), _line(f"Date of referral: {printed}"))
    assert fields["referral_date"].value == "2026-03-03" == iso_date(printed)


def test_values_under_their_labels_in_a_banner_table() -> None:
    """Labels in a header row, values in the row under them: each value is its own label's."""
    header = [
        ("Pt.", 100),
        ("name", 170),
        ("DOB", 500),
        ("Study", 800),
        ("participant", 920),
        ("Referral", 1300),
        ("date", 1480),
    ]
    values = [
        ("Jane", 100),
        ("Okoye", 200),
        ("16-NOV-1951", 500),
        ("STU/00479", 800),
        ("6", 1300),
        ("May", 1340),
        ("2026", 1430),
    ]
    fields = _fields(header, values)
    assert fields["participant_id"].value == "STU/00479"
    assert fields["referral_date"].value == "2026-05-06"


def test_a_label_alone_in_its_cell_needs_no_colon() -> None:
    """A table prints "Practice" alone in its cell; inside a sentence the word is no label."""
    fields = _fields([("Practice", 100), ("Castlegate", 800), ("Surgery", 1020)])
    assert fields["referring_clinic"].value == "Castlegate Surgery"
    prose = _fields(_line("The practice nurse saw her on Monday."))
    assert prose["referring_clinic"].status == "missing"


def test_a_letter_sends_its_reason_to_review_and_dates_and_signs_itself() -> None:
    """No labels: the reason after its cue word ("regarding") is found by a word that is
    no label (a sentence "not to be contacted regarding the study" has one too), so it
    goes to review, held below the bar. The date line above "Dear", the page's one date,
    and the one clinician's signature under the closing, no other name unexplained (the
    addressee is the letter's head's), are the letter's own: the letter singles them out."""
    fields = _fields(
        _line("Castlegate Surgery"),
        _line("Our ref: HW/7391") + _line("7th July 2025", 1200),
        _line("Dear Dr Marsh,"),
        _line(
            "I would be grateful if you could see this patient regarding persistent hoarse voice."
        ),
        _line("Yours sincerely,"),
        _line("Dr Hannah Whitfield"),
        _line("General Practitioner"),
    )
    read = {name: (f.status, f.value) for name, f in fields.items()}
    assert read["referral_date"] == ("found", "2025-07-07")
    assert read["clinician"] == ("found", "Dr Hannah Whitfield")
    assert read["reason"] == ("review", None)
    assert fields["reason"].confidence <= UNSINGLED
    # A letterhead alone was misread once in 52 on the tuning split: review, never a guess.
    assert read["referring_clinic"] == ("review", None)
    assert all(f.confidence < 1.0 for f in fields.values())


def test_a_letters_signature_beside_another_name_or_signed_for_goes_to_review() -> None:
    """Another person named in the letter no label explains ("Dr Osei saw her"), or a
    signature someone signed for ("p.p."), leaves who refers unsure: review."""
    close = [_line("Yours sincerely,"), _line("Dr Hannah Whitfield"), _line("General Practitioner")]
    head = [_line("Dear colleague,")]
    other = _fields(*head, _line("Dr Kofi Osei saw her last week."), *close)
    assert (other["clinician"].status, other["clinician"].value) == ("review", None)
    assert other["clinician"].confidence <= UNSINGLED
    signed_for = _fields(*head, *close[:2], _line("p.p. Medical Secretary"))
    assert (signed_for["clinician"].status, signed_for["clinician"].value) == ("review", None)


def test_a_letters_date_line_beside_an_unexplained_date_goes_to_review() -> None:
    """ "I saw her on 2nd July 2025": a date no label explains, so the date line is not the
    only one the letter could be dated by; a birth date beside "DOB" is explained."""
    head = [_line("7th July 2025", 1200), _line("Dear colleague,")]
    seen = _fields(*head, _line("I saw her on 2nd July 2025 with a persistent cough."))
    assert (seen.get("referral_date").status, seen["referral_date"].value) == ("review", None)
    assert seen["referral_date"].confidence <= UNSINGLED
    born = _fields(*head, _line("DOB: 02/07/1961"))
    assert (born["referral_date"].status, born["referral_date"].value) == ("found", "2025-07-07")


def test_two_letter_dates_above_the_salutation_disagree_and_go_to_review() -> None:
    """Two lines that are each a date and nothing else: which is the letter's is unsure."""
    fields = _fields(_line("7th July 2025"), _line("12 August 2025"), _line("Dear colleague,"))
    assert (fields["referral_date"].status, fields["referral_date"].value) == ("review", None)


def test_a_wrapped_sentence_keeps_its_identifier() -> None:
    """ "... enrolled as Study participant" / "SUB-2291-07 ...": the value starts the next line;
    the sentence's cue names it at once, so the sentence reading (not the wrapped one) gives it."""
    page = placed(
        [
            _line("She is enrolled in your trial as Study participant"),
            _line("SUB-2291-07 and was seen last week."),
        ],
        dy=45,
    )
    before = unbarred([page])["participant_id"]
    assert (before.value, before.method) == ("SUB-2291-07", "sentence:identifier")
    published = extract([page], declared=DocType.REFERRAL).fields["participant_id"]
    assert (published.status, published.value) == ("found", "SUB-2291-07")
    assert published.confidence < 0.99


def test_a_reason_with_a_word_a_letter_off_a_known_one_goes_to_review() -> None:
    """ "tigling" (OCR dropped an n, and was sure) is a misread, not a clinical word;
    "apnoea", a British spelling, and "haemochromatosis", a word the dictionary lacks,
    are read as printed."""

    def reason(words: str) -> tuple[str, object]:
        found = _fields(_line("Reason for referral:") + _line(words, 800))["reason"]
        return found.status, found.value

    assert reason("Intermittent tigling in both hands") == ("review", None)
    assert reason("Suspected sleep apnoea") == ("found", "Suspected sleep apnoea")
    assert reason("Possible haemochromatosis") == ("found", "Possible haemochromatosis")
