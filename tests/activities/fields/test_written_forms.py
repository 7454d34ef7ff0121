"""Dates, identifiers and label layouts as people write them, beyond one generator's (issue #27)."""

from __future__ import annotations

import pytest

from activities.fields import extract
from activities.fields.layout import page_lines
from activities.fields.normalise import iso_date
from activities.fields.values import identifier_value
from custody.fields import DocType, FoundField
from tests.activities.fields.pages import flowing, placed


def _fields(*rows: str) -> dict[str, FoundField]:
    return extract([flowing(list(rows))], declared=DocType.REFERRAL).fields


def test_iso_date_needs_a_roman_month_set_apart() -> None:
    """ "12-vi-99x" is a code, not a date: the year must end the numeral date."""
    assert iso_date("12-vi-99x") is None


@pytest.mark.parametrize(
    ("printed", "value"),
    [
        ("PT_0042_A", "PT_0042_A"),
        ("(P-0042)", "P-0042"),
        ("[SUB-7123]", "SUB-7123"),
        ("TRX/26/08450", "TRX/26/08450"),
        ("ENR-15292-V", "ENR-15292-V"),
    ],
)
def test_identifier_value_keeps_separators_and_drops_brackets(printed: str, value: str) -> None:
    """Underscores, slashes and dashes are the identifier's; brackets around it are not."""
    parsed = identifier_value(page_lines(flowing([printed]))[0].tokens)
    assert parsed is not None and parsed[0] == value


def test_a_note_after_a_label_is_skipped() -> None:
    """ "Study ID (if applicable): SUB-7123": the bracketed note is no value."""
    found = _fields("Study ID (if applicable): SUB-7123")["participant_id"]
    assert (found.status, found.value) == ("found", "SUB-7123")


def test_a_bracketed_identifier_after_a_label_is_the_value() -> None:
    """ "Participant ID: (P-0042)": brackets around digits hold the value, not a note."""
    found = _fields("Participant ID: (P-0042)")["participant_id"]
    assert (found.status, found.value) == ("found", "P-0042")


def test_a_value_centred_under_its_label_is_read_below_it() -> None:
    """A cell's value centred under a wide label, not aligned with its left edge."""
    page = placed(
        [[("Participant", 100), ("identifier", 340)], [("SUB-7123", 300)]],
        dy=45,
    )
    found = extract([page], declared=DocType.REFERRAL).fields["participant_id"]
    assert (found.status, found.value, found.method) == ("found", "SUB-7123", "anchor:below")


@pytest.mark.parametrize(
    ("row", "value"),
    [
        ("Consent to data sharing: declined", False),
        ("Information sharing consent: Yes", True),
        ("Sharing consent: withdrawn", False),
        ("Consent recorded: Y", True),
    ],
)
def test_consent_label_wordings_give_their_answer(row: str, value: bool) -> None:
    """Consent labels as other forms word them: the one answer written after them."""
    found = _fields(row)["consent"]
    assert (found.status, found.value) == ("found", value)


def test_consent_given_then_withdrawn_is_review() -> None:
    """A form's "Yes" and a later sentence withdrawing consent conflict: nobody guesses."""
    found = _fields("Consent to share: Yes", "The patient later withdrew consent to share.")
    assert (found["consent"].status, found["consent"].value) == ("review", None)


def test_classify_a_fax_cover_of_a_referral_as_a_referral() -> None:
    """A fax's header words ("To", "From", "Pages") lose to a letter's clinical and consent
    words when the letter is a referral's."""
    page = flowing(
        [
            "FAX",
            "To: Study coordinator",
            "From: St Anne's Health Centre",
            "Pages: 2",
            "Dear colleague, please see this patient, diagnosed with asthma in 2019.",
            "Her medication and allergies are listed overleaf.",
            "She gave permission to share these notes with the consultant.",
        ]
    )
    assert extract([page]).classification.type == DocType.REFERRAL
