"""Receipt fields on fictitious receipts: the address's bounds, checked words, the total paid."""

from __future__ import annotations

from activities.fields import extract
from activities.fields.layout import Token
from activities.fields.wording import ADDRESS_WORDS, check, near_state
from custody.fields import DocType
from custody.models import PageText, Word


def _receipt(rows: list[str], *, conf: float = 0.99) -> PageText:
    """A page whose row ``n`` sits at y = 100 + 60n, its words 20 px per letter apart."""
    words = []
    for n, row in enumerate(rows):
        y, x = 100 + 60 * n, 50
        for text in row.split():
            box = [[x, y], [x + 20 * len(text), y], [x + 20 * len(text), y + 30], [x, y + 30]]
            words.append(Word(text=text, confidence=conf, box=box))
            x += 20 * len(text) + 20
    return PageText(
        page=0, width=1200, height=2200, text="", words=words, mean_confidence=conf, seconds=0.0
    )


def _read(rows: list[str]) -> dict[str, tuple[str, object]]:
    fields = extract([_receipt(rows)], declared=DocType.RECEIPT).fields
    return {name: (f.status, f.value) for name, f in fields.items()}


HEAD = ["KEDAI MAJU TRADING", "(001234-K)"]


def test_receipt_address_runs_from_name_to_telephone_line() -> None:
    """The address is every line between the name and the telephone line, joined."""
    read = _read([*HEAD, "NO 12, JALAN MAWAR 3,", "TAMAN BAIK, 43000 KAJANG", "TEL: 03-1234 5678"])
    assert read["address"] == ("found", "NO 12, JALAN MAWAR 3, TAMAN BAIK, 43000 KAJANG")


def test_receipt_address_without_postcode_is_bounded_by_a_tax_line() -> None:
    """An address with no postcode, closed by a GST line, is still published."""
    read = _read([*HEAD, "88, SS9/2A,", "DAMANSARA UTAMA", "GST ID : 000123456789"])
    assert read["address"] == ("found", "88, SS9/2A, DAMANSARA UTAMA")


def test_receipt_address_repairs_a_state_one_letter_off() -> None:
    """A state OCR misspelt by one letter after the postcode line is read as that state."""
    read = _read([*HEAD, "No 3, Jalan SS1/1, 47400 Petaling Jaya", "Setangor", "Tel 03-1111"])
    assert read["address"] == ("found", "No 3, Jalan SS1/1, 47400 Petaling Jaya Selangor")


def test_receipt_address_with_unknown_accented_word_needs_review() -> None:
    """An accented word no known word repairs sends the address to review, with no value."""
    read = _read([*HEAD, "NO 5, JALAN KÉMBOJA,", "43000 KAJANG", "TEL 03-1111"])
    assert read["address"] == ("review", None)


def test_receipt_company_folds_an_accent_into_a_known_word() -> None:
    """ "Restäurants" is folded to the known word "Restaurants"; the name is then published."""
    read = _read(["Mawar Restäurants Sdn Bhd", "(001234-K)", "NO 1, JALAN 2", "TEL 03-1"])
    assert read["company"] == ("found", "Mawar Restaurants Sdn Bhd")


def test_receipt_total_is_cash_less_change_when_the_subtotal_prints_it() -> None:
    """No total label: cash less change, printed as the subtotal too, is the total."""
    rows = [*HEAD, "NO 1, JALAN 2", "TEL 03-1", "ITEM A RM20.00", "SUBTOTAL RM53. 60"]
    read = _read([*rows, "CASH RM100.00", "CHANGE RM46.40"])
    assert read["total"] == ("found", "53.60")


def test_receipt_total_prefers_rounded_total_to_subtotal_and_cash() -> None:
    """The rounded total is taken, never the subtotal, the cash or the change."""
    rows = [*HEAD, "NO 1, JALAN 2", "TEL 03-1", "SUBTOTAL 9.98", "ROUNDED TOTAL 10.00"]
    read = _read([*rows, "CASH 20.00", "CHANGE 10.00"])
    assert read["total"] == ("found", "10.00")


def test_receipt_total_read_twice_takes_the_surer_reading() -> None:
    """An item OCR read as "KOTAI" looks like a "Total" label and prints the same amount
    as the real total (sroie_022): the exact label's reading is published, not review."""
    rows = [*HEAD, "NO 1, JALAN 2", "TEL 03-1", "1 KOTAI 8.49 8.49 9.00 SR"]
    read = _read([*rows, "Total Includes GST 6% 9.00", "Cash 50.00", "Change 41.00"])
    assert read["total"] == ("found", "9.00")


def test_check_repairs_a_digit_read_for_a_letter_only_into_a_known_word() -> None:
    """ "J1n" becomes "Jln" (a known short form); "B1x" stays, as doubt."""
    token = Token("J1n", 0.99, 0, 0, 0, 10, 10)
    assert check([token], ADDRESS_WORDS.__contains__).tokens[0].text == "Jln"
    assert check([Token("B1x", 0.99, 0, 0, 0, 10, 10)], ADDRESS_WORDS.__contains__).doubt


def test_check_lets_a_known_word_outweigh_ocr_doubt() -> None:
    """A known word OCR was unsure of does not lower the value's confidence; another word does."""
    known = check([Token("Jalan", 0.7, 0, 0, 0, 10, 10)], ADDRESS_WORDS.__contains__)
    unknown = check([Token("Mawar", 0.7, 0, 0, 0, 10, 10)], ADDRESS_WORDS.__contains__)
    assert (known.confidence, unknown.confidence) == (1.0, 0.7)


def test_near_state_names_only_one_state() -> None:
    """A word one letter off a single state names it; a state or a far word names none."""
    assert (near_state("Setangor"), near_state("SELANGOR"), near_state("Kajang")) == (
        "SELANGOR",
        None,
        None,
    )
