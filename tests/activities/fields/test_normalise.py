"""Normalisers: dates, totals, consent words and identifiers into their normal form."""

from __future__ import annotations

import pytest

from activities.fields.normalise import (
    amounts_in,
    consent_word,
    dates_in,
    day_first,
    day_month_swappable,
    decimal_text,
    identifier,
    iso_date,
    plain_text,
)


@pytest.mark.parametrize(
    ("printed", "iso"),
    [
        ("2026-03-14", "2026-03-14"),
        ("14/03/2026", "2026-03-14"),
        ("14.03.2026", "2026-03-14"),
        ("05/02/2025", "2025-02-05"),
        ("14 March 2026", "2026-03-14"),
        ("March 14, 2026", "2026-03-14"),
        ("14-Mar-2026", "2026-03-14"),
        ("26/02/18", "2018-02-26"),
        ("25 DEC 2018", "2018-12-25"),
        ("1st Sept 2025", "2025-09-01"),
        # As letters and forms from other hands print them: Roman-numeral months,
        # "the 3rd day of", an apostrophe year, a weekday first.
        ("3.iii.2026", "2026-03-03"),
        ("12-XI-2025", "2025-11-12"),
        ("the 3rd day of March 2026", "2026-03-03"),
        ("3 March '26", "2026-03-03"),
        ("Tuesday, 3rd March 2026", "2026-03-03"),
        ("Mar. 3, 2026", "2026-03-03"),
        # Comb boxes read as a word a group: day, month and year spaced out.
        ("12 01 2026", "2026-01-12"),
    ],
)
def test_iso_date_reads_each_printed_style(printed: str, iso: str) -> None:
    """Every date style the referrals and receipts print reads as the same ISO date."""
    assert iso_date(printed) == iso


@pytest.mark.parametrize(
    "printed", ["31/02/2026", "13/13/2026", "no date here", "", "01 23 4567", "Tel 12 34 5678"]
)
def test_iso_date_refuses_what_is_not_a_date(printed: str) -> None:
    """Impossible or absent dates give None, never a guess."""
    assert iso_date(printed) is None


def test_dates_in_marks_repaired_readings() -> None:
    """A date read only after repairing OCR letters (O for 0) says it was repaired."""
    (clean,) = dates_in("05/02/2025")
    (repaired,) = dates_in("O5/02/2O25")
    assert (clean.iso, clean.repaired) == ("2025-02-05", False)
    assert (repaired.iso, repaired.repaired) == ("2025-02-05", True)


def test_dates_in_finds_each_date_once() -> None:
    """Two dates on one line are two hits, in order."""
    assert [h.iso for h in dates_in("DOB 01/02/1970 referred 03/04/2020")] == [
        "1970-02-01",
        "2020-04-03",
    ]


@pytest.mark.parametrize(
    ("printed", "normal"),
    [("RM53.60", "53.60"), ("9.00", "9.00"), ("1,234.5", "1234.50"), ("$12", "12.00")],
)
def test_decimal_text_gives_two_places(printed: str, normal: str) -> None:
    """Totals become decimal strings with two places, currency and separators dropped."""
    assert decimal_text(printed) == normal


def test_amounts_in_finds_money_not_dates() -> None:
    """Amounts need two decimals, so a date's numbers are not taken for money."""
    assert [a for a, _, _ in amounts_in("25/01/2018 TOTAL RM 1,209.50")] == ["1209.50"]


@pytest.mark.parametrize(
    ("word", "value"),
    [("Yes", True), ("no.", False), ("Y", True), ("\u25a1No", False), ("maybe", None)],
)
def test_consent_word_reads_yes_and_no(word: str, value: bool | None) -> None:
    """Yes/no words are booleans; anything else is None."""
    assert consent_word(word) == value


def test_identifier_and_text_are_trimmed_as_printed() -> None:
    """Identifiers keep their own characters and case; only surrounding punctuation goes."""
    assert identifier(" #P-00421: ") == "P-00421"
    assert identifier("PT-0421-A") == "PT-0421-A"
    assert plain_text("Persistent   knee pain.") == "Persistent knee pain"


def test_spaced_dates_count_as_evidence_of_order_and_may_swap() -> None:
    """ "21 07 1940" shows a page prints days first; "04 07 2026" could be either."""
    assert day_first("Birth date 21 07 1940") and not day_first("04 07 2026")
    assert day_month_swappable("04 07 2026") and not day_month_swappable("21 07 1940")
