"""The default policy's detectors on words laid out as OCR gives them, by label and by shape.

Word boxes written by hand (no engine): the identifiers issue #28 found left
readable (an MRN with a prefix and a hyphen, a name in prose, an address, a
phone number) beside words that must stay.
"""

from __future__ import annotations

from activities.redact.detect import detect
from activities.redact.lines import all_lines
from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION
from custody.models import PageText, Word

#: The detectors and fields alone, the allow-list sweeps off: what these tests are about
#: (``test_allow`` covers the sweeps the default policy adds).
DETECTORS_ONLY = DEFAULT_REDACTION.model_copy(update={"sweeps": ()})

H = 30


def _page(rows: list[str]) -> PageText:
    """Each row a line of words 60 px apart, each word 18 px per character wide."""
    words = []
    for n, row in enumerate(rows):
        x = 100
        for text in row.split():
            x1 = x + 18 * len(text)
            box = [[x, 100 + 60 * n], [x1, 100 + 60 * n], [x1, 130 + 60 * n], [x, 130 + 60 * n]]
            words.append(Word(text=text, confidence=0.99, box=box))
            x = x1 + 18
    return PageText(
        page=0, width=1700, height=2200, text="\n".join(rows), words=words,
        mean_confidence=0.99, seconds=0,
    )  # fmt: skip


def _kept(rows: list[str]) -> tuple[str, set[str]]:
    plan = make_plan([_page(rows)], None, DETECTORS_ONLY)
    return normal(" ".join(w.text for w in plan.kept[0].words)), {r.source for r in plan.regions}


def test_redaction_detects_an_mrn_by_its_prefix_and_hyphen() -> None:
    """``MRN-687024`` and ``MRN:5512345`` go wherever they stand; the text around them stays."""
    kept, sources = _kept(["Seen today, MRN-687024 on file.", "Ref MRN:5512345 noted"])
    assert "687024" not in kept and "5512345" not in kept and "seentoday" in kept
    assert sources == {"mrn"}


def test_redaction_detects_names_in_prose_and_beside_a_label() -> None:
    """A given name and surname in a sentence, and "Patient:" with a name, both go."""
    kept, sources = _kept(
        ["I reviewed Peter Morgan in clinic today.", "Patient: Lindqvist Ottoline", "Thank you"]
    )
    assert "peter" not in kept and "morgan" not in kept and "lindqvist" not in kept
    assert "ireviewed" in kept and "inclinictoday" in kept and "thankyou" in kept
    assert {"person_name", "patient_name"} <= sources


def test_redaction_detects_phone_address_and_organisation() -> None:
    """A phone number, an address's lines and the company name above them all go."""
    kept, sources = _kept(
        [
            "FUYI MINI MARKET SDN BHD",
            "NO 43, TAMAN SEJATI, IJOK,",
            "45600 BESTARI JAYA, SELANGOR",
            "Tel: 03-5525 1234",
            "Total 9.00 on 25/01/2018",
        ]
    )
    for gone in ("fuyi", "sejati", "bestari", "55251234"):
        assert gone not in kept
    assert "total900on25012018" in kept
    assert {"phone", "address", "organisation"} <= sources


def test_redaction_keeps_dates_amounts_and_plain_prose() -> None:
    """No detector fires on a referral date, an amount or a sentence without a name."""
    rows = ["Referral Date: 14/03/2026", "Please offer an outpatient appointment.", "Total 85.54"]
    kept, sources = _kept(rows)
    assert sources == set() and "14032026" in kept and "8554" in kept


def test_redaction_sweeps_a_labelled_name_written_the_other_way_round() -> None:
    """ "Surname, forename: Quist, Anneliese" and later "Anneliese Quist" (no lexicon name):
    the label's name goes word by word, so the prose one goes too."""
    rows = ["Surname, forename: Quist, Anneliese", "please see Anneliese Quist soon"]
    kept, sources = _kept(rows)
    assert "quist" not in kept and "anneliese" not in kept and "pleasesee" in kept
    assert {"patient_name", "sweep"} <= sources


def test_redaction_detects_a_phone_with_a_six_digit_group_and_a_short_label() -> None:
    """ "Ph: 01234 567890" and "Contact no.: 01632 960001" go; "Total 85.54" stays."""
    kept, sources = _kept(["Ph: 01234 567890", "Contact no.: 01632 960001", "Total 85.54"])
    assert "567890" not in kept and "960001" not in kept and "8554" in kept
    assert sources == {"phone"}


def test_an_identifiers_label_with_no_value_read_has_its_slot_painted_by_the_plan_only() -> None:
    """ "Birth date" with nothing read after it (comb boxes OCR does not read) gets its
    slot, from the label to the page's text edge, painted by the plan; a label whose value
    was read, and a sentence that goes on after "born", get no slot; and the check, which
    cannot tell a painted slot from an unread one, does not run the rule."""
    rows = ["Birth date", "Date of birth: 02/03/1961", "Reason: new murmur on auscultation today"]
    plan = make_plan(
        [_page([*rows, "She was born in Leeds and moved south later"])], None, DETECTORS_ONLY
    )
    slots = [r for r in plan.regions if r.source == "date_of_birth" and r.box[1] < 140]
    assert len(slots) == 1
    x0, y0, x1, y1 = slots[0].box
    label_end = 100 + 18 * len("Birth") + 18 + 18 * len("date")
    assert label_end - H < x0 <= label_end + 5 and y0 < 100 < 130 < y1  # the policy's padding
    assert x1 >= 100 + 18 * len(" ".join(rows[2].split())) - 5  # the text's right edge
    # The sentence's line keeps its words; the read value is painted as a value, not a slot.
    assert "moved" in normal(" ".join(w.text for w in plan.kept[0].words))
    lines = all_lines([_page(rows)])
    assert [h.source for h in detect(lines, DETECTORS_ONLY.detectors) if not h.strings] == []
