"""Names where names stand: common words in a person's slot go, by the detectors alone.

Every name below is made of frequent English words the given-name lexicon
lacks ("Grant", "Field", "Page", "Hope", "Church"), so neither the sweep nor the
lexicon knows it for a name: only its position does. Lines written for these
tests, word boxes by hand (``test_detect._page``).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pikepdf

from activities.engines.base import ParamValue
from activities.pages.raster import GrayPage
from activities.redact.check import Surfaces, find, read_surfaces
from activities.redact.paint import build_pdf
from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION, RedactionPolicy
from activities.redact.scan import scan
from activities.redact.vocabulary import common
from custody.models import PageText
from tests.activities.redact.test_detect import DETECTORS_ONLY, _page

_NAME_WORDS = ("grant", "field", "page", "hope", "church", "summer", "wood", "bishop")


def _kept(rows: list[str], policy: RedactionPolicy = DETECTORS_ONLY) -> tuple[str, set[str]]:
    plan = make_plan([_page(rows)], None, policy)
    kept = normal(" ".join(w.text for w in plan.kept[0].words))
    return kept, {r.source for r in plan.regions}


def test_slots_names_are_common_words_no_rule_knows() -> None:
    """The test's names are frequent English words outside the lexicon: the sweep keeps them."""
    assert all(common(word) for word in _NAME_WORDS)
    kept, _ = _kept(["The field and the church were seen in summer."], DEFAULT_REDACTION)
    assert "field" in kept and "church" in kept and "summer" in kept


def test_slots_remove_a_name_after_a_title_with_the_title() -> None:
    """After any title, initials and all, the name goes, and the title with it."""
    kept, sources = _kept(["Clinician in charge: Sister L. R. Page", "Nurse Hope Church called"])
    assert "page" not in kept and "sister" not in kept
    assert "hope" not in kept and "church" not in kept and "nurse" not in kept
    assert kept == normal("Clinician in charge: called")
    assert sources == {"person_name"}


def test_slots_a_title_ending_its_line_takes_the_name_from_the_line_below() -> None:
    """ "... with his partner, Dr." / "Grant teņ Field today.": the name the line's end cut
    from its title goes, title and all, its particle too though OCR gave it an accent; a
    line ending in a title over a line of form words keeps them."""
    kept, sources = _kept(["Seen again in clinic with his partner, Dr.", "Grant teņ Field today."])
    assert "grant" not in kept and "field" not in kept and "dr" not in kept.split("partner")[-1]
    assert kept == normal("Seen again in clinic with his partner, today.")
    assert sources == {"person_name"}
    kept, _ = _kept(["Please ask for Dr.", "the referral form and consent."])
    assert kept == normal("Please ask for Dr. the referral form and consent.")


def test_slots_an_initial_a_is_an_initial_not_the_article() -> None:
    """ "Sister A. Field", "Dr A Page": the initial "A" is no small word; the name and its
    title go. "To: A team" holds no name (initials alone make none)."""
    kept, _ = _kept(["Clinician: Sister A. Field", "Seen by Dr A Page today", "To: A team"])
    assert "sister" not in kept and "field" not in kept and "page" not in kept
    assert kept == normal("Clinician: Seen by today To: A team")


def test_slots_remove_the_value_of_a_persons_label() -> None:
    """After a label naming a role or a relative, the name goes, one word or several, in
    either order."""
    rows = [
        "Usual GP: Page",
        "Referred by: Grant Field",
        "Attending physician: FIELD, GRANT",
        "Consultant: Church, Hope",
        "Seen by Summer Wood on Monday",
        "Next of kin: Bishop",
        "Mother: Hope Field",
    ]
    kept, sources = _kept(rows)
    for word in _NAME_WORDS:
        assert word not in kept, word
    assert kept == normal(
        "Usual GP: Referred by: Attending physician: Consultant: Seen by on Monday"
        " Next of kin: Mother:"
    )
    assert sources == {"person_name"}


def test_slots_remove_a_name_in_a_sign_off_and_a_salutation() -> None:
    """A letter's "Dear X", a sign-off's name on its line or the line under it, "per", "cc:"."""
    rows = [
        "Dear Grant,",
        "Kind regards, Page",
        "Yours sincerely,",
        "Hope Church",
        "per Bishop",
        "cc: Summer Wood",
    ]
    kept, sources = _kept(rows)
    for word in ("grant", "page", "hope", "church", "bishop", "summer", "wood"):
        assert word not in kept, word
    assert kept == normal("Dear, Kind regards, Yours sincerely, per cc:")
    assert sources == {"person_name"}


def test_slots_remove_a_name_before_credentials() -> None:
    """The words before MD, RN, MBBS FRCP, or a comma and DO, are a name; the letters stay."""
    rows = ["Grant Field MBBS FRCP", "Reviewed today, Page RN", "Wood, DO"]
    kept, _ = _kept(rows)
    for word in ("grant", "field", "page", "wood"):
        assert word not in kept, word
    assert "mbbsfrcp" in kept and "reviewedtoday" in kept and kept.endswith("rndo")


def test_slots_keep_generic_addressees_roles_and_organisations() -> None:
    """ "Dear Colleague", a role after a sign-off, an organisation after "To:", prose "as per"
    and "signed consent" keep their words: no name stands there."""
    rows = [
        "Dear Colleague,",
        "To: Medical Records",
        "Dose as per protocol.",
        "Signed consent form attached.",
        "Regards to the team",
    ]
    kept, sources = _kept(rows)
    assert kept == normal(" ".join(rows))
    assert sources == set()


def test_slots_found_again_by_the_check_by_kind_and_box_only() -> None:
    """The check re-runs the rule on a view's text layer: a slot's name left in it is found,
    as ``person_name`` with its box, and the name is not in what leaves the check."""
    view = _page(["Clinician: Page", "Yours sincerely,", "Grant Field"])
    surfaces = Surfaces(b"", ("",), ("",), (), "", "x", "0", (view,))
    found = scan(surfaces, DETECTORS_ONLY, ())
    public = [f.public() for f in found]
    assert {p["kind"] for p in public} == {"person_name"}
    boxes = {tuple(f.box) for f in found}
    assert boxes >= {(298, 100, 370, 130), (100, 220, 298, 250)}
    assert not any(word in json.dumps(public) for word in ("Page", "Grant", "Field"))


class _Blind:
    """An engine that reads nothing: the view's text layer and bytes are what is searched."""

    name, version = "blind", "0"

    def params(self) -> dict[str, ParamValue]:
        return {}

    def model_hashes(self) -> dict[str, str]:
        return {}

    def recognise(self, image: GrayPage, page: int) -> PageText:
        return _page([]).model_copy(update={"page": page})


def test_slots_name_spelling_pdf_syntax_is_searched_in_text_not_in_names() -> None:
    """A removed surname that spells a PDF name ("Page", as in ``/Type /Page``) does not
    refuse a clean view; printed in the view's text layer, it is still found."""
    white = np.full((2200, 1700), 255, dtype=np.uint8)
    clean = read_surfaces(build_pdf([(white, _page(["Clinician:"]))], 200), _Blind(), 200)
    shown = read_surfaces(build_pdf([(white, _page(["Clinician: Page"]))], 200), _Blind(), 200)
    assert b"/Page" in clean.pdf
    assert find(clean, ["Page", "Width"]) == ()
    assert "text-layer:p1" in find(shown, ["Page"])


def _with_image(pixels: bytes, tail: bytes = b"") -> bytes:
    """A one-page PDF drawing one gray image whose stream holds ``pixels`` unfiltered."""
    pdf = pikepdf.new()
    image = pikepdf.Stream(
        pdf, pixels, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image,
        Width=len(pixels), Height=1, ColorSpace=pikepdf.Name.DeviceGray, BitsPerComponent=8,
    )  # fmt: skip
    page = pdf.add_blank_page(page_size=(200, 20))
    page.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=image))
    page.Contents = pikepdf.Stream(pdf, b"q 200 0 0 20 0 0 cm /Im0 Do Q")
    out = io.BytesIO()
    pdf.save(out, compress_streams=False)  # the pixels as given, in the file's bytes
    return out.getvalue() + tail


def test_slots_removed_string_in_image_pixels_is_not_a_byte_leak_but_in_the_file_it_is() -> None:
    """A removed "YYYY" (a date format's hint) that an image's compressed pixels spell by
    chance is in no text anyone reads (seed 8 refused a clean view for it); outside the
    pixels, in the file's own bytes, it is still found."""
    pixels = bytes(range(100, 164)) + b"YYYY" + bytes(range(100, 164))
    clean = read_surfaces(_with_image(pixels), _Blind(), 72)
    assert b"YYYY" in clean.pdf and clean.pixels == (pixels,)
    assert find(clean, ["YYYY"]) == ()
    shown = read_surfaces(_with_image(pixels, b"%YYYY\n"), _Blind(), 72)
    assert find(shown, ["YYYY"]) == ("bytes",)
