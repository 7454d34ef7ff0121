"""How released pages are stored: real corpus scans through Pillow's codecs, qpdf and pdfium."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pikepdf
import pytest
from PIL import Image

from activities.egress import encode
from activities.egress.original import Original, originals
from activities.pages.raster import iter_pages
from activities.pages.searchable import searchable_pdf
from custody.models import PageText, Word

PDF_NAME = "funsdpdf_2pages_86220490_86328049.pdf"


def _page(path: Path, media_type: str) -> np.ndarray:
    return next(iter_pages(path, media_type, 200))[1]


def _decoded(image: encode.PageImage) -> np.ndarray:
    """The pixels a PDF reader decodes from ``image``, through qpdf's own image support."""
    with pikepdf.new() as pdf:
        stream = pdf.make_stream(b"")
        stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        page = pdf.add_blank_page()
        page.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=stream))
        encode.place(page, image)
        return np.asarray(pikepdf.PdfImage(stream).as_pil_image().convert("L"))


def test_is_bilevel_tells_a_fax_from_a_grey_scan(corpus: Path) -> None:
    """A 1-bit TIFF decodes to pure black and white; a grey PNG scan does not."""
    assert encode.is_bilevel(_page(corpus / "ocr_gt" / "unlv_8071_093.3B.tif", "image/tiff"))
    assert not encode.is_bilevel(_page(corpus / "ocr_gt" / "funsd_82092117.png", "image/png"))


def test_one_bit_keeps_ink_and_screens_light_grey() -> None:
    """Ink stays black everywhere; the mark's grey is inked on one row in four; paper stays."""
    page = np.full((8, 6), 255, dtype=np.uint8)
    page[:, 0], page[:, 1], page[:, 2] = 0, 150, 200
    one = np.asarray(encode.one_bit(Image.fromarray(page)).convert("L"))
    assert (one[:, 0] == 0).all() and (one[:, 1] == 0).all()
    assert [int(v) for v in one[:, 2]] == [0, 255, 255, 255] * 2
    assert (one[:, 3:] == 255).all()


def test_bilevel_page_is_group4_and_decodes_to_its_pixels(corpus: Path) -> None:
    """A fax page becomes CCITT G4 near its TIFF's own size and decodes to the same pixels."""
    path = corpus / "ocr_gt" / "unlv_8071_093.3B.tif"
    page = Image.fromarray(_page(path, "image/tiff"))
    image = encode.pdf_image(page, bilevel=True)
    assert (image.filter, image.bits) == ("/CCITTFaxDecode", 1)
    assert len(image.data) <= 1.05 * path.stat().st_size
    assert (_decoded(image) == np.asarray(page)).all()


def test_grey_page_keeps_sixteen_levels_losslessly_stored(corpus: Path) -> None:
    """A grey scan is stored as 16 levels under Flate, smaller than its PNG, and decodes to them."""
    path = corpus / "ocr_gt" / "funsd_82092117.png"
    page = Image.fromarray(_page(path, "image/png"))
    image = encode.pdf_image(page, bilevel=False)
    assert (image.filter, image.bits) == ("/FlateDecode", 4)
    assert len(image.data) < path.stat().st_size
    levels = np.asarray(encode.grey4(page).convert("L"))
    assert (_decoded(image) == levels).all()
    assert np.abs(levels.astype(int) - np.asarray(page)).max() <= 9  # half a step of 17


def test_shrink_brings_an_upsampled_page_back_and_leaves_others() -> None:
    """A page drawn at twice its scan's resolution is halved; scale 1 returns it unchanged."""
    page = Image.new("L", (400, 300), 255)
    assert encode.shrink(page, 0.5).size == (200, 150)
    assert encode.shrink(page, 1.0) is page


def test_png_is_one_bit_or_four_bit_with_its_text_chunks(corpus: Path) -> None:
    """Page PNGs are 1 bit for a fax and a 4-bit grey palette otherwise, with their tEXt."""
    info = encode.PngImagePlugin.PngInfo()
    info.add_text("Custody-Release-Id", "r1")
    fax = Image.fromarray(_page(corpus / "ocr_gt" / "tess_phototest.tif", "image/tiff"))
    grey = Image.fromarray(_page(corpus / "ocr_gt" / "funsd_82092117.png", "image/png"))
    for page, bilevel, mode in ((fax, True, "1"), (grey, False, "P")):
        with Image.open(io.BytesIO(encode.png(page, bilevel, info, 200))) as png:
            assert png.mode == mode and png.size == page.size
            assert png.text["Custody-Release-Id"] == "r1"
            if mode == "P":
                assert len(png.getcolors() or []) <= 16


def test_originals_read_a_pdf_scans_resolution_and_depth(corpus: Path, tmp_path: Path) -> None:
    """The corpus PDF holds 100 dpi grey scans; a fax PDF, 300 dpi 1-bit; images say nothing."""
    found = originals(corpus / "ocr_gt" / PDF_NAME, "application/pdf")
    assert found == [Original(dpi=100.0, bilevel=False)] * 2
    assert found[0].scale(200) == 0.5 and Original().scale(200) == 1.0
    fax = tmp_path / "fax.pdf"
    Image.open(corpus / "ocr_gt" / "unlv_8071_093.3B.tif").save(fax, resolution=300)
    assert originals(fax, "application/pdf") == [Original(dpi=300.0, bilevel=True)]
    assert Original(dpi=300.0).scale(200) == 1.0  # never drawn above the OCR resolution
    assert originals(corpus / "ocr_gt" / "funsd_82092117.png", "image/png") == []


def test_originals_keep_vector_text_at_the_ocr_resolution(tmp_path: Path) -> None:
    """A 100 dpi scan under an OCR layer's invisible words is a scan; with the same words
    drawn visibly over it (born-digital text on a background) it is not."""
    word = Word(text="Hello", confidence=0.9, box=[[10, 10], [100, 10], [100, 40], [10, 40]])
    text = PageText(page=0, width=300, height=400, text="Hello", words=[word],
                    mean_confidence=0.9, seconds=0.0)  # fmt: skip
    image = np.full((400, 300), 200, dtype=np.uint8)
    invisible = searchable_pdf([(image, text)], 100)
    (tmp_path / "ocred.pdf").write_bytes(invisible)
    assert originals(tmp_path / "ocred.pdf", "application/pdf") == [Original(dpi=100.0)]
    with pikepdf.open(io.BytesIO(invisible)) as pdf:
        content = pdf.pages[0].Contents
        assert b" 3 Tr " in content.read_bytes()
        content.write(content.read_bytes().replace(b" 3 Tr ", b" 0 Tr "))
        pdf.save(tmp_path / "drawn.pdf")
    assert originals(tmp_path / "drawn.pdf", "application/pdf") == [Original()]


def test_place_refuses_a_page_without_exactly_one_image() -> None:
    """A page of two images (or none) is not a released page: ValueError, RENDER_FAILED above."""
    with pikepdf.new() as pdf:
        page = pdf.add_blank_page()
        page.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary())
        with pytest.raises(ValueError, match="exactly one image"):
            encode.place(page, encode.PageImage(b"", 1, 1, 8, "/DCTDecode"))
