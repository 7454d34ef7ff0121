"""The allow-list sweep: a word not known safe goes, whatever the detectors know.

Word boxes written by hand (``test_detect._page``) for the rules, and one page
drawn and read by the real OCR engine for a view that must converge (kept,
not refused) with the sweep on in its check.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from activities.engines.base import OcrEngine
from activities.pages.raster import to_gray
from activities.redact.check import Surfaces, read_surfaces
from activities.redact.core import make_view
from activities.redact.paint import build_pdf
from activities.redact.plan import Region, make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION, RedactionPolicy, load_redaction
from activities.redact.scan import scan
from custody.models import PageText
from starter.bench.referrals import _font
from tests.activities.redact.test_detect import _page

#: The default policy's hash before the sweeps existed: views and releases pin it.
_DEFAULT_SHA256 = "aae993c32d3ed0f054ae27c32fdd76721c96a4f15064996e759f75ae0d70aa06"


def _kept(rows: list[str]) -> tuple[str, set[str]]:
    plan = make_plan([_page(rows)], None, DEFAULT_REDACTION)
    kept = " ".join(w.text for w in plan.kept[0].words)
    return normal(kept), {r.source for r in plan.regions if r.reason == "sweep"}


def test_sweep_removes_an_unlisted_name_after_an_unseen_label() -> None:
    """A name no lexicon holds, after a label no detector knows, goes; the label stays."""
    kept, sources = _kept(["Person seen: Thandiwe Achterberg", "Thank you"])
    assert "thandiwe" not in kept and "achterberg" not in kept
    assert "personseen" in kept and "thankyou" in kept
    assert "proper_noun" in sources


def test_sweep_removes_particle_and_apostrophe_names_whole() -> None:
    """ "van der Berg" and "O'Connell" go whole, particles and all; the prose around stays."""
    kept, _ = _kept(["Copied to Maarten van der Berg and Siobhan O'Connell today."])
    for part in ("maarten", "vander", "berg", "siobhan", "oconnell", "connell"):
        assert part not in kept
    assert "copiedto" in kept and "and" in kept and "today" in kept


def test_sweep_removes_an_identifier_with_an_unseen_prefix() -> None:
    """An ID no detector's shape knows ("ZQ-4471-K"), and a date, go; one list number stays."""
    kept, sources = _kept(["1. Enrolment key ZQ-4471-K kept on file since 03/02/2019"])
    assert "4471" not in kept and "zq" not in kept and "2019" not in kept
    assert kept.startswith("1") and "keptonfilesince" in kept
    assert "digits" in sources


def test_sweep_removes_a_number_written_one_digit_to_a_box() -> None:
    """A comb field's digits, each alone in its box, read whole: they go; a list number
    beside words stays."""
    kept, sources = _kept(["Study number 4 0 7 1 9 2", "3 Plan follows"])
    assert kept == normal("Study number 3 Plan follows")
    assert "digits" in sources


def test_sweep_follows_a_name_the_line_end_cut() -> None:
    """A name wrapped onto the next line goes whole, though its last word is a common one
    starting a line; a sentence the line's end closes leaves the next line's first word."""
    kept, _ = _kept(["in clinic with her partner, Ngaire", "Brook. She would like", "a visit."])
    assert kept == normal("in clinic with her partner, She would like a visit.")
    kept, _ = _kept(["seen with his partner, Prof Ravi", "Hart. Plan follows"])
    assert kept == normal("seen with his partner, Plan follows")
    kept, _ = _kept(["We spoke to Ngaire.", "Brook trout was served."])
    assert kept == normal("We spoke to Brook trout was served.")


def test_sweep_keeps_common_words_and_form_words() -> None:
    """A sentence of common words, capitalised or not, and a form's own words all stay."""
    rows = ["Referral Reason: Persistent cough at night.", "The patient reported chest pain."]
    kept, sources = _kept(rows)
    assert kept == normal(" ".join(rows))
    assert sources == set()


def test_sweep_removes_a_common_surname_beside_a_given_name() -> None:
    """ "Brown" and "Mills" are common words, yet go beside a name the list does not hold."""
    kept, _ = _kept(["Seen by Tsegaye Brown and Rose Mills at noon"])
    assert "tsegaye" not in kept and "brown" not in kept and "mills" not in kept
    assert "seenby" in kept and "atnoon" in kept


def test_sweep_removes_names_after_a_title_and_initials() -> None:
    """The capitalised words after a title or initials go, however common they are."""
    kept, _ = _kept(["Letter from Dr Summer Brown, signed J. Hill, for review"])
    assert "summer" not in kept and "brown" not in kept and "hill" not in kept
    assert "letterfrom" in kept and "forreview" in kept


def test_sweep_finds_in_the_check_by_kind_and_box_never_text() -> None:
    """The check's re-read of a view finds a swept word by kind, page and box only."""
    surfaces = Surfaces(b"", ("",), ("",), (), "", "x", "0", (_page(["Copied to Achterberg"]),))
    found = scan(surfaces, DEFAULT_REDACTION, ())
    public = [f.public() for f in found]
    assert {p["kind"] for p in public} == {"proper_noun"}
    assert "Achterberg" not in json.dumps(public)


def test_scan_reads_the_second_reader_as_the_first_however_unsure() -> None:
    """The check's second reading is detected and swept as the first is, however unsure
    its words: a fax's date it read at 0.32 is still found."""
    page = _page(["Copied to Achterberg", "DOB: 08-06-2012"])
    for confidence in (0.3, 0.99):
        words = [w.model_copy(update={"confidence": confidence}) for w in page.words]
        second = page.model_copy(update={"words": words})
        surfaces = Surfaces(b"", ("",), ("",), (), "", "x", "0", (), (), ("",), (second,))
        kinds = {f.kind for f in scan(surfaces, DEFAULT_REDACTION, ("08-06-2012",))}
        assert {"date_of_birth", "proper_noun", "digits", "removed_string"} <= kinds


class _ReadsTheRows:
    """Stand-in second reader (no OCR: the test places the words it reads by hand)."""

    name, version = "rows", "0"

    def __init__(self, rows: list[str]) -> None:
        self._rows = rows

    def params(self) -> dict[str, str]:
        return {}

    def model_hashes(self) -> dict[str, str]:
        return {}

    def recognise(self, image: object, page: int) -> PageText:
        return _page(self._rows).model_copy(update={"page": page})


def test_check_reads_the_second_reader_only_where_the_first_read_nothing_nor_painted() -> None:
    """The second reading keeps only its words that lie mostly outside the first reading's
    words and the view's paint (where Tesseract reads the black as "ES [ED"): what the
    workers' engine never detected, text and words alike."""
    white = np.full((2200, 1700), 255, dtype=np.uint8)
    pdf = build_pdf([(white, _page([]))], 200)
    second = _ReadsTheRows(["Copied to Achterberg", "DOB: 08-06-2012"])
    blind = _ReadsTheRows([])
    on_the_name = (Region(0, (270, 95, 470, 135), "plan", "test"),)  # over "Achterberg"
    read = read_surfaces(pdf, blind, 200, second, on_the_name)
    assert [w.text for w in read.second_pages[0].words] == ["Copied", "to", "DOB:", "08-06-2012"]
    assert "Achterberg" not in read.second_ocr[0] and "08-06-2012" in read.second_ocr[0]
    assert read.engine == "rows+rows"
    first_read = read_surfaces(pdf, _ReadsTheRows(["Copied to"]), 200, second)
    assert [w.text for w in first_read.second_pages[0].words] == [
        "Achterberg",
        "DOB:",
        "08-06-2012",
    ]
    assert read_surfaces(pdf, blind, 200).second_pages == ()


def test_sweep_leaves_a_stored_policys_hash_as_it_was(tmp_path: Path) -> None:
    """The sweeps are on by default but out of the canonical form at the default: the
    built-in policy and one stored before them hash as before; turning them off does not."""
    assert DEFAULT_REDACTION.sha256() == _DEFAULT_SHA256
    stored = DEFAULT_REDACTION.model_dump(mode="json")
    assert "sweeps" not in stored
    path = tmp_path / "old.json"
    path.write_text(json.dumps({**stored, "name": "old"}))
    old = load_redaction(str(path))
    assert old.sweeps == ("digits", "proper_noun")
    assert old.sha256() == RedactionPolicy(name="old").sha256()
    assert RedactionPolicy(name="old", sweeps=()).sha256() != old.sha256()


def test_sweep_view_converges_and_is_kept(ocr_engine: OcrEngine) -> None:
    """A drawn letter whose names and ID no detector knows is kept, not refused, with the
    sweep run again in its check; neither the names nor the ID are in the view."""
    rows = [
        "Letter of care",
        "Enrollee Thandiwe Achterberg was seen today with her daughter.",
        "Enrolment key ZQ-4471-K. Please keep this letter on file.",
        "Thank you for your help.",
    ]
    image = Image.new("L", (1700, 1000), 250)
    draw = ImageDraw.Draw(image)
    for n, row in enumerate(rows):
        draw.text((120, 120 + 120 * n), row, font=_font(40), fill=20)
    gray = to_gray(image)
    pages = [ocr_engine.recognise(gray, 0)]
    made = make_view([(0, gray)], pages, None, DEFAULT_REDACTION, ocr_engine, 200)
    layer = normal(made.text)
    assert made.report.clean
    assert "achterberg" not in layer and "thandiwe" not in layer and "4471" not in layer
    assert "seentoday" in layer and "thankyouforyourhelp" in layer
    assert {"proper_noun", "digits"} <= {r.source for r in made.plan.regions}


def test_sweep_takes_initials_and_the_name_after_them() -> None:
    """Initials ("A.B.") go with the common surname after them; the sentence stays."""
    kept, _ = _kept(["Reviewed with A.B. Wood on the ward"])
    assert "ab" not in kept.replace("ward", "") and "wood" not in kept
    assert "reviewedwith" in kept and "ontheward" in kept


def test_sweep_removes_a_pair_of_common_words_printed_as_a_name() -> None:
    """Two common words side by side as a form prints a name ("Rose Mills", "ROSE MILLS")
    go; the label before them, after its colon, stays."""
    kept, _ = _kept(["Next of kin: ROSE MILLS", "Carer: Grace Brown"])
    assert "rose" not in kept and "mills" not in kept
    assert "grace" not in kept and "brown" not in kept
    assert "nextofkin" in kept and "carer" in kept
