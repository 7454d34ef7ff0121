"""Redacted views of synthetic referrals, made and checked with the real OCR engine.

The referrals come from ``starter.bench.referrals`` with their truth; the
engine is the session's default one. Two tests build a faulty view on
purpose (a stand-in for a painting or text-layer bug) to show the check
refuses it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pikepdf
import pytest

from activities.engines.base import OcrEngine
from activities.inspect.sandboxed import iter_pages_sandboxed
from activities.pages.raster import GrayPage, to_gray
from activities.redact.check import check_view
from activities.redact.core import make_view
from activities.redact.paint import build_pdf, paint
from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION
from custody.errors import RedactionLeak
from custody.models import PageText
from starter.bench.referrals import generate
from tests.helpers import StandInEngine

DPI = 200


@dataclass
class Read:
    images: list[GrayPage]
    pages: list[PageText]
    truth: dict[str, str | bool]


@pytest.fixture(scope="module")
def letter(ocr_engine: OcrEngine) -> Read:
    """A one-page referral letter (clinician named twice, ID beside an MRN), read by OCR."""
    ref = generate(2, 7)
    images = [to_gray(page) for page in ref.pages]
    pages = [ocr_engine.recognise(image, n) for n, image in enumerate(images)]
    return Read(images, pages, ref.truth)


def _known(read: Read) -> list[str]:
    """The truth values the default policy removes: the plan is never told them."""
    return [str(read.truth["participant_id"]), str(read.truth["clinician"])]


def _layer(pdf: bytes) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        return " ".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


def test_redaction_view_removes_identifiers_and_keeps_the_rest(
    letter: Read, ocr_engine: OcrEngine
) -> None:
    """The view's text layer and pixels hold no removed string; other words stay searchable."""
    made = make_view(
        enumerate(letter.images),
        letter.pages,
        None,
        DEFAULT_REDACTION,
        ocr_engine,
        DPI,
    )
    assert made.report.clean and made.report.pages == 1
    sources = {r.source for r in made.plan.regions}
    assert {"participant_id", "mrn", "date_of_birth", "person_name"} <= sources
    layer = normal(_layer(made.pdf))
    for value in _known(letter):
        assert normal(value) not in layer
    # The letter's prose stays; the clinic's name goes too, as the allow-list sweep's
    # proper nouns (it was kept before the sweep, no detector naming it).
    assert "thankyouforseeingthisparticipant" in layer
    assert normal(str(letter.truth["referring_clinic"])) not in layer
    x0, y0, x1, y1 = made.plan.regions[0].box
    rendered = make_plan(letter.pages, None, DEFAULT_REDACTION).regions[0].box
    assert (x0, y0, x1, y1) == rendered  # the plan is deterministic


def test_redaction_check_finds_a_word_left_in_the_text_layer(
    letter: Read, ocr_engine: OcrEngine
) -> None:
    """Stand-in fault: painted pixels but the full OCR text layer; the check refuses it."""
    plan = make_plan(letter.pages, None, DEFAULT_REDACTION)
    leaky = build_pdf([(paint(letter.images[0], plan.regions), letter.pages[0])], DPI)
    report = check_view(leaky, plan.secrets, ocr_engine, DPI)
    assert "text-layer:p1" in report.leaks and "ocr:p1" not in report.leaks


def test_redaction_check_reads_unpainted_pixels_back(letter: Read, ocr_engine: OcrEngine) -> None:
    """Stand-in fault: words dropped from the layer but nothing painted; re-OCR finds them."""
    plan = make_plan(letter.pages, None, DEFAULT_REDACTION)
    leaky = build_pdf([(letter.images[0], plan.kept[0])], DPI)
    report = check_view(leaky, plan.secrets, ocr_engine, DPI)
    assert report.leaks == ("ocr:p1",)


class _ReadsASecret(StandInEngine):
    """Stand-in engine (a fault injected on purpose): its re-read of every page
    prints the participant ID, as a painting bug would leave it."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    def recognise(self, image: GrayPage, page: int) -> PageText:
        return PageText(
            page=page, width=1, height=1, text=self.secret, words=[], mean_confidence=1, seconds=0
        )


def test_redaction_leak_refuses_the_view(letter: Read) -> None:
    """A view whose check finds a removed string raises REDACTION_LEAK instead of returning."""
    engine = _ReadsASecret(str(letter.truth["participant_id"]))
    with pytest.raises(RedactionLeak) as caught:
        make_view(enumerate(letter.images), letter.pages, None, DEFAULT_REDACTION, engine, DPI)
    assert caught.value.code == "REDACTION_LEAK" and "ocr:p1" in caught.value.detail


def test_redaction_view_drops_metadata_annotations_and_attachments(
    tmp_path: Path, letter: Read, ocr_engine: OcrEngine
) -> None:
    """A source PDF's metadata, annotation and attachment never reach the view."""
    secret = str(letter.truth["participant_id"])
    source = tmp_path / "referral.pdf"
    _source_pdf(letter.images[0], secret, source)
    images = iter_pages_sandboxed(source, "application/pdf", DPI)
    made = make_view(images, letter.pages, None, DEFAULT_REDACTION, ocr_engine, DPI)
    with pikepdf.open(io.BytesIO(made.pdf)) as view:
        assert "/Info" not in view.trailer
        assert "/Metadata" not in view.Root and "/Names" not in view.Root
        assert all("/Annots" not in page for page in view.pages)
    assert made.pdf.count(b"%%EOF") == 1  # one revision: no incremental history
    assert normal(secret) not in normal(made.pdf.decode("latin-1"))


def _source_pdf(image: GrayPage, secret: str, path: Path) -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "PDF", resolution=float(DPI))
    with pikepdf.open(io.BytesIO(buffer.getvalue())) as pdf:
        pdf.docinfo["/Title"] = f"Referral {secret}"
        with pdf.open_metadata() as meta:
            meta["dc:title"] = secret
        annot = pikepdf.Dictionary(
            Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Text, Rect=[0, 0, 10, 10], Contents=secret
        )
        pdf.pages[0].Annots = pdf.make_indirect(pikepdf.Array([annot]))
        pdf.attachments["note.txt"] = pikepdf.AttachedFileSpec(pdf, secret.encode())
        pdf.save(path)
