"""The released file: real corpus scans through real pdfium, qpdf and Tesseract."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image
from pydantic import ValidationError

from activities.egress.pdfmeta import ReleaseMark, check_code, read_identity
from activities.egress.readback import _nearest, find_release_id, read_visible_mark
from activities.egress.render import render_page_png, render_release
from activities.pages.layout import page_lines
from activities.pages.raster import GrayPage, iter_pages
from activities.pages.searchable import searchable_pdf
from custody.errors import RenderFailed
from custody.models import PageText, Word

DPI = 200
PDF_NAME = "funsdpdf_2pages_86220490_86328049.pdf"
# FUNSD boxes are in the 100 dpi pixels of the original scans.
ANNOTATIONS = ["funsdpdf_86220490.json", "funsdpdf_86328049_8050.json"]
MARK = ReleaseMark(
    release_id="rel-20261130-7f3a9c",
    recipient="Dr. Ana Ruiz, St. Mary Clinic",
    policy_name="court-disclosure",
    policy_sha256=hashlib.sha256(b"policy v3").hexdigest(),
    date="2026-11-30",
)

Pages = list[tuple[GrayPage, PageText]]
_NO_SPACE = str.maketrans("", "", " \t\r\n")


def _words(path: Path, scale: float) -> list[Word]:
    words = []
    for entity in json.loads(path.read_text())["form"]:
        for word in entity["words"]:
            if word["text"].strip():
                x0, y0, x1, y1 = (round(v * scale) for v in word["box"])
                box = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
                words.append(Word(text=word["text"], confidence=0.9, box=box))
    return words


@pytest.fixture(scope="module")
def pages(corpus: Path) -> Pages:
    """The two FUNSD pages of the corpus PDF at 200 dpi, with their annotated words."""
    ocr_gt = corpus / "ocr_gt"
    out = []
    rendered = iter_pages(ocr_gt / PDF_NAME, "application/pdf", DPI)
    for (index, image), name in zip(rendered, ANNOTATIONS, strict=True):
        words = _words(ocr_gt / "_annotations" / name, DPI / 100)
        text = " ".join(w.text for w in words)
        height, width = image.shape
        page = PageText(page=index, width=width, height=height, text=text, words=words,
                        mean_confidence=0.9, seconds=0.0)  # fmt: skip
        out.append((image, page))
    return out


@pytest.fixture(scope="module")
def released(pages: Pages) -> bytes:
    return render_release(pages, DPI, MARK)


def _gray(pdf: pdfium.PdfDocument, index: int, dpi: int = DPI) -> GrayPage:
    bitmap = pdf[index].render(scale=dpi / 72, grayscale=True)
    return np.asarray(bitmap.to_pil().convert("L"))


def test_render_release_same_inputs_same_bytes(pages: Pages, released: bytes) -> None:
    """Rendering twice gives identical bytes; another release id gives other bytes."""
    assert render_release(iter(pages), DPI, MARK) == released
    other = MARK.model_copy(update={"release_id": "rel-20261130-000001"})
    assert render_release(pages, DPI, other) != released


def test_render_release_pages_are_the_stamped_scans(pages: Pages, released: bytes) -> None:
    """Every page is its scan with the bands added; page 1 shows what render_page_png draws."""
    pdf = pdfium.PdfDocument(released)
    assert len(pdf) == len(pages)
    for index, (source, _) in enumerate(pages):
        shown = _gray(pdf, index)
        assert shown.shape[1] == source.shape[1] and shown.shape[0] > source.shape[0]
    png = Image.open(io.BytesIO(render_page_png(pages[0][0], MARK, dpi=DPI)))
    stamped = np.asarray(png.convert("L"))  # a 4-bit grey palette: its levels, not indices
    shown = _gray(pdf, 0).astype(np.int16)
    assert abs(shown.shape[0] - stamped.shape[0]) <= 1  # pdfium rounds the page size
    rows = min(shown.shape[0], stamped.shape[0])
    assert np.abs(shown[:rows] - stamped[:rows]).mean() < 2.0


def _content_top(page: GrayPage, source: GrayPage) -> int:
    # The offset at which the scan's darkest row lines up again.
    row = int(np.argmin(source.mean(axis=1)))
    diffs = [np.abs(page[row + dy].astype(int) - source[row]).mean() for dy in range(600)]
    return int(np.argmin(diffs))


def test_render_release_text_layer_keeps_words_on_their_boxes(
    pages: Pages, released: bytes
) -> None:
    """The invisible OCR words are all there, shifted down with the scan under the band."""
    pdf = pdfium.PdfDocument(released)
    source, text = pages[0]
    top = _content_top(_gray(pdf, 0), source)
    textpage = pdf[0].get_textpage()
    # pdfium joins touching words, so compare the characters, not the tokens.
    found = Counter(textpage.get_text_range().translate(_NO_SPACE))
    assert found == Counter("".join(w.text for w in text.words).translate(_NO_SPACE))
    # The first character sits inside the box of the first word the layer writes (the
    # page's first line in reading order, activities.pages.layout), moved down by the band.
    height_pt = pdf[0].get_size()[1]
    first = page_lines(text)[0].tokens[0]
    (x0, y0), (x1, y1) = (first.x0, first.y0), (first.x1, first.y1)
    left, bottom, right, top_pt = textpage.get_charbox(0)
    scale, slack = 72 / DPI, 6.0
    assert x0 * scale - slack < left < right < x1 * scale + slack
    assert height_pt - (y1 + top) * scale - slack < bottom < height_pt - (y0 + top) * scale


def test_render_release_embeds_identity_and_nothing_else(released: bytes) -> None:
    """/ID, XMP and info dict name the release; the catalog holds pages and metadata only."""
    identity = read_identity(released)
    assert identity is not None
    assert identity.release_id == MARK.release_id and identity.id_matches
    assert identity.policy_sha256 == MARK.policy_sha256
    assert identity.recipient == MARK.recipient
    expected = hashlib.sha256(MARK.release_id.encode()).digest()[:16]
    with pikepdf.open(io.BytesIO(released)) as pdf:
        assert [bytes(i) for i in pdf.trailer.ID] == [expected, expected]
        assert set(pdf.Root.keys()) == {"/Type", "/Pages", "/Metadata"}
        assert str(pdf.docinfo["/CustodyReleaseId"]) == MARK.release_id
        assert "/Creator" not in pdf.docinfo  # pdfium's own stamp is gone
        assert all("/Annots" not in page.obj for page in pdf.pages)
        assert pdf.check_pdf_syntax() == []
        meta = pdf.open_metadata()
        ns = "{https://custody.invalid/ns/egress/1.0/}"
        assert meta[ns + "releaseId"] == MARK.release_id


def test_read_identity_absent_or_contradicted(pages: Pages, released: bytes) -> None:
    """No XMP or no PDF gives None; an /ID that disagrees with the XMP is reported."""
    assert read_identity(searchable_pdf(pages[:1], DPI)) is None
    assert read_identity(b"not a pdf") is None
    with pikepdf.open(io.BytesIO(released)) as pdf:
        pdf.trailer.ID = pikepdf.Array([pikepdf.String(b"x" * 16)] * 2)
        out = io.BytesIO()
        pdf.save(out)
    identity = read_identity(out.getvalue())
    assert identity is not None and not identity.id_matches


def test_read_visible_mark_from_pdf_and_print_scan_proxy(released: bytes) -> None:
    """Tesseract reads the id from the PDF and from page 1 at 150 dpi saved as JPEG q=60."""
    assert read_visible_mark(released) == MARK.release_id
    scan = Image.fromarray(_gray(pdfium.PdfDocument(released), 0, dpi=150))
    jpeg = io.BytesIO()
    scan.save(jpeg, "JPEG", quality=60)
    assert read_visible_mark(jpeg.getvalue()) == MARK.release_id


def test_read_visible_mark_none_on_unmarked_scan(corpus: Path) -> None:
    """A scan that was never released, or bytes that are no image, carry no mark."""
    assert read_visible_mark((corpus / "ocr_gt" / "funsd_82092117.png").read_bytes()) is None
    assert read_visible_mark(b"\x00" * 64) is None


# Tesseract's text for two ids it misread in a 40-id trial at 200 dpi (a dropped
# f; 4f read as 44; the check codes misread too): no check code confirms them.
_MISREAD = {
    "04d124cea831648fabb19a69308509f6": "04d124cea831648fabb19a693085096\n9FW7S\n",
    "4f7ff69c5136b15c377261fed42c6411": "447ff69c5136b15c377261fed42c6411\n25WT4\n",
}
_DECOYS = [hashlib.sha256(str(n).encode()).hexdigest()[:32] for n in range(500)]


@pytest.mark.parametrize(("rid", "text"), _MISREAD.items())
def test_nearest_matches_misread_ids_to_the_stores_candidates(rid: str, text: str) -> None:
    """A printed id a few OCR slips off is matched to the one release id the store holds."""
    assert find_release_id(text) is None
    assert _nearest(text, [*_DECOYS, rid]) == rid
    assert _nearest(text, _DECOYS) is None  # never another release


# Tesseract's text for the top band of three redacted releases where the bold
# monospace f slipped (read as "#" and dropped, as "T", doubled as "Ff"): the
# smaller sentence row below still spells the id.
_SLIPPED_F = {
    "fd4850636978ad490148e15c768841d8": (
        "#d4850636978ad490148e15c768841d8 DAWBJ\n\nReleased to clinic-r - 2026-11-30 - "
        "policy redacted - release fd4850636978ad490148e15c768841d8\n"
    ),
    "17e4325aa3a5bef40db0fba71e0f9f99": (
        "17e4325aa3a5bef40db0fba71le0f9T99 AT3NY\n\nReleased to clinic-r - 2026-11-30 - "
        "policy redacted - release 17e4325aa3a5bef40db0fba7 1e0f9f99\n"
    ),
    "1c6c835c0bd0239693828b9f3e7fb23f": (
        "1c6c835c0bd0239693828b9f3e7Fb23Ff6QV1W\n\n"
        "Reeaed0cc20261130cedacedeeace1c6c835c0bd0239693828b9f3e7fb23f\n"
    ),
}


@pytest.mark.parametrize(("rid", "text"), _SLIPPED_F.items())
def test_nearest_finds_the_id_anywhere_in_a_line(rid: str, text: str) -> None:
    """The id is matched where it stands inside a line (after "release", before its code)."""
    assert find_release_id(text) is None
    assert _nearest(text, [*_DECOYS, rid]) == rid
    assert _nearest(text, _DECOYS) is None
    # A short id is never matched by edits: four slips could make it out of any text.
    assert _nearest(text, ["clinic-r"]) is None


def test_find_release_id_reads_the_bottom_line_past_its_page_number() -> None:
    """The bottom line's code is followed by "· page N", and Tesseract may split the id."""
    rid = "d31f92f6a36fff8ac577ec7f94b62f23"
    line = "Released to clinic-r - 2026-11-30 - release {} " + check_code(rid) + " - page 1"
    assert find_release_id(line.format("d31f92f6 a36fff8ac577 ec 7f94b62f23")) == rid
    assert find_release_id(line.format(rid)) == rid
    assert find_release_id(line.format("d31f92f6a36fff8ac577ec7f94b62f24")) is None


def test_read_visible_mark_with_candidates_reads_the_rendered_id(released: bytes) -> None:
    """With the store's ids as candidates, the printed release id is still found."""
    assert read_visible_mark(released, [*_DECOYS, MARK.release_id]) == MARK.release_id


def test_find_release_id_uses_check_code_to_fix_lookalikes() -> None:
    """Misread 0/O and l/I are corrected only to the reading the check code confirms."""
    code = check_code(MARK.release_id)
    assert find_release_id(f"junk\nreI-2O261130-7f3a9c {code.lower()}\n") == MARK.release_id
    assert find_release_id(f"rel-20261130-7f3a9d {code}") is None
    assert find_release_id("rel-20261130-7f3a9c") is None


def test_render_page_png_burns_mark_without_hiding_content(pages: Pages) -> None:
    """The scan sits between two printed bands; the diagonal only ever darkens it."""
    source = pages[0][0]
    data = render_page_png(source, MARK, dpi=DPI)
    assert render_page_png(source, MARK, dpi=DPI) == data
    with Image.open(io.BytesIO(data)) as image:
        assert image.text["Custody-Release-Id"] == MARK.release_id
        page = np.asarray(image.convert("L"))
    height, width = source.shape
    assert page.shape[1] == width
    top = _content_top(page, source)
    content = page[top : top + height]
    # Stored as 16 grey levels: a pixel may round up by at most half a step (17 / 2).
    assert (content.astype(np.int16) <= source.astype(np.int16) + 8).all()
    marked = (source.astype(np.int16) - content) > 20
    assert 0.005 < marked.mean() < 0.15  # a light repeat, not a veil
    assert page[:top].min() < 50 and page[top + height :].min() < 50  # black band text


def test_render_release_failures_are_coded_and_textless(pages: Pages) -> None:
    """No pages, or a page that is not 8-bit gray, fail with RENDER_FAILED and no page text."""
    with pytest.raises(RenderFailed) as empty:
        render_release([], DPI, MARK)
    assert empty.value.code == "RENDER_FAILED"

    def colour() -> Iterator[tuple[GrayPage, PageText]]:
        yield pages[0]
        yield np.zeros((10, 10, 3), dtype=np.uint8), pages[1][1]

    with pytest.raises(RenderFailed, match="page 2") as bad:
        render_release(colour(), DPI, MARK)
    assert not any(w.text in str(bad.value) for w in pages[1][1].words if len(w.text) > 3)


def test_release_mark_rejects_what_cannot_be_printed_or_parsed() -> None:
    """Bad dates, path-like ids and control characters are refused; text() names all four."""
    for change in ({"date": "2026-02-30"}, {"release_id": "../x"}, {"recipient": "a\nb"}):
        with pytest.raises(ValidationError):
            ReleaseMark(**{**MARK.model_dump(), **change})
    line = MARK.text()
    assert all(p in line for p in (MARK.recipient, MARK.date, MARK.policy_name, MARK.release_id))
