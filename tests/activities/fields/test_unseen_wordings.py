"""Classes found on the tuned generators' second draw (seed 1), each a wrong value published
above its bar or a field lost: an unknown label's line under a label, qualifications after a
clinician's comma, the patient's own GP beside the referrer, a filler word inside a label,
and a name with "Sister" for its title. Hand-laid lines of this file's own wording."""

from __future__ import annotations

from activities.fields import extract
from custody.fields import DocType, FoundField
from tests.activities.fields.pages import Row, placed, row_of


def _field(rows: list[Row], name: str) -> FoundField:
    return extract([placed(rows)], declared=DocType.REFERRAL).fields[name]


def test_reason_is_not_a_line_with_an_unknown_labels_colon_in_its_first_words() -> None:
    """Under the label with its value far right: "Wishes to take part: (delete one)" is a
    label's line whose wording no list knows, not the reason (published at 0.95 before)."""
    found = _field(
        [
            [("Indication:", 100), ("Painless", 700), ("jaundice", 900)],
            row_of("Wishes to take part: (delete one)", 100),
        ],
        "reason",
    )
    assert found.value != "Wishes to take part: (delete one)"
    assert (found.status, found.value) == ("found", "Painless jaundice")


def test_clinician_keeps_the_qualifications_after_the_comma() -> None:
    """The page prints "Imogen Stroud, MRCP": the name with its letters, as printed; a role
    after the comma still ends the name."""
    found = _field([row_of("Referring physician: Dr Imogen Stroud, MRCP, FRCR", 100)], "clinician")
    assert (found.status, found.value) == ("found", "Dr Imogen Stroud, MRCP, FRCR")
    found = _field([row_of("Referring physician: Dr Imogen Stroud, GP", 100)], "clinician")
    assert found.value == "Dr Imogen Stroud"


def test_the_patients_own_gp_is_not_the_referrer() -> None:
    """ "Registered GP: Dr ..." names the patient's doctor: with the referrer's own label
    unread, no clinician goes out (published at 0.93 before)."""
    found = _field(
        [
            row_of("Registered GP: Dr Amos Keel", 100),
            row_of("Clinician in charge: Sister P. Quarrie", 100),
        ],
        "clinician",
    )
    assert found.value != "Dr Amos Keel"
    assert (found.status, found.value) == ("found", "Sister P. Quarrie")


def test_a_label_holds_one_filler_word() -> None:
    """ "Reason for this referral" is "Reason for referral": its value is what follows, not
    "for this referral" (published at 0.97 before)."""
    found = _field(
        [
            [
                ("Reason", 100),
                ("for", 260),
                ("this", 340),
                ("referral", 440),
                ("Night", 800),
                ("sweats", 920),
            ]
        ],  # fmt: skip
        "reason",
    )
    assert (found.status, found.value) == ("found", "Night sweats")
