"""Page images: every document becomes 8-bit grayscale pages, one at a time."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image

from activities.pages.raster import count_pages, iter_pages, to_gray

CORPUS = Path(
    os.environ.get("CUSTODY_CORPUS")
    or Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
)
PHOTOTEST = CORPUS / "ocr_gt" / "tess_phototest.tif"
TWO_PAGE_PDF = CORPUS / "ocr_gt" / "funsdpdf_2pages_86220490_86328049.pdf"


@pytest.fixture
def multipage_tiff(tmp_path: Path) -> Path:
    """Three pages of different sizes and modes: bilevel, grayscale, colour."""
    path = tmp_path / "three.tif"
    first = Image.new("1", (40, 30), 1)
    rest = [Image.new("L", (50, 20), 128), Image.new("RGB", (60, 10), (255, 0, 0))]
    first.save(path, save_all=True, append_images=rest, compression="tiff_deflate")
    return path


def test_iter_pages_bilevel_tiff_becomes_uint8(corpus_ok: None) -> None:
    """A 1-bit fax TIFF comes out as a 2-D uint8 array holding only 0 and 255."""
    pages = list(iter_pages(PHOTOTEST, "image/tiff", dpi=200))
    assert [index for index, _ in pages] == [0]
    image = pages[0][1]
    assert image.dtype == np.uint8 and image.shape == (480, 640)
    assert set(np.unique(image).tolist()) == {0, 255}


def test_iter_pages_pdf_renders_each_page_at_dpi(corpus_ok: None) -> None:
    """Both PDF pages render as grayscale at page points * dpi / 72 pixels."""
    pdf = pdfium.PdfDocument(TWO_PAGE_PDF)
    sizes = [pdf[i].get_size() for i in range(len(pdf))]
    pdf.close()
    pages = list(iter_pages(TWO_PAGE_PDF, "application/pdf", dpi=100))
    assert count_pages(TWO_PAGE_PDF, "application/pdf") == 2
    assert [index for index, _ in pages] == [0, 1]
    for (_, image), (width_pt, height_pt) in zip(pages, sizes, strict=True):
        assert image.dtype == np.uint8 and image.ndim == 2
        # pdfium rounds the pixel size up, so allow one pixel.
        assert abs(image.shape[1] - width_pt * 100 / 72) <= 1
        assert abs(image.shape[0] - height_pt * 100 / 72) <= 1
        assert image.min() < 128 < image.max()  # ink on paper, not a blank render


def test_iter_pages_pdf_start_skips_done_pages(corpus_ok: None) -> None:
    """``start=1`` resumes a PDF at its second page."""
    pages = list(iter_pages(TWO_PAGE_PDF, "application/pdf", dpi=72, start=1))
    assert [index for index, _ in pages] == [1]


def test_iter_pages_multipage_tiff_yields_each_page(multipage_tiff: Path) -> None:
    """Every TIFF frame is yielded in order with its own size, as uint8."""
    pages = list(iter_pages(multipage_tiff, "image/tiff", dpi=200))
    assert count_pages(multipage_tiff, "image/tiff") == 3
    assert [(i, a.shape, str(a.dtype)) for i, a in pages] == [
        (0, (30, 40), "uint8"),
        (1, (20, 50), "uint8"),
        (2, (10, 60), "uint8"),
    ]
    assert pages[0][1].min() == 255 and pages[1][1].max() == 128


def test_iter_pages_tiff_start_skips_done_pages(multipage_tiff: Path) -> None:
    """``start=1`` skips the first frame without yielding it."""
    pages = list(iter_pages(multipage_tiff, "image/tiff", dpi=200, start=1))
    assert [index for index, _ in pages] == [1, 2]


def test_iter_pages_jpeg_exif_orientation_applied(tmp_path: Path) -> None:
    """A JPEG stored sideways with Orientation=6 comes out upright (rotated)."""
    path = tmp_path / "sideways.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    Image.new("RGB", (40, 20), "white").save(path, exif=exif)
    [(_, image)] = list(iter_pages(path, "image/jpeg", dpi=200))
    assert image.shape == (40, 20)


def test_iter_pages_unknown_media_type_rejected(tmp_path: Path) -> None:
    """A media type without a page reader raises instead of guessing a decoder."""
    with pytest.raises(ValueError, match="no page reader"):
        list(iter_pages(tmp_path / "x.bin", "application/octet-stream", dpi=200))


def test_to_gray_rgba_flattens_on_white() -> None:
    """Transparent pixels become white paper, opaque black stays black."""
    image = Image.new("RGBA", (2, 1), (0, 0, 0, 0))
    image.putpixel((1, 0), (0, 0, 0, 255))
    assert to_gray(image).tolist() == [[255, 0]]


def test_to_gray_la_flattens_on_white() -> None:
    """Grayscale with alpha is flattened the same way as RGBA."""
    image = Image.new("LA", (2, 1), (0, 0))
    image.putpixel((1, 0), (0, 255))
    assert to_gray(image).tolist() == [[255, 0]]


def test_to_gray_palette_uses_palette_and_transparency() -> None:
    """Palette indices map through the palette; the transparent index becomes white."""
    image = Image.new("P", (3, 1), 0)
    image.putpalette([0, 0, 0, 255, 255, 255, 10, 10, 10])
    image.putpixel((1, 0), 1)
    image.putpixel((2, 0), 2)
    assert to_gray(image).tolist() == [[0, 255, 10]]
    image.info["transparency"] = 2
    assert to_gray(image).tolist() == [[0, 255, 255]]


def test_to_gray_16bit_scales_instead_of_clipping() -> None:
    """Full-range 16-bit samples map onto 0..255 instead of clipping to white."""
    samples = np.array([[0, 32896, 65535]], dtype=np.uint16)
    image = Image.fromarray(samples)
    assert image.mode.startswith("I;16")
    assert to_gray(image).tolist() == [[0, 128, 255]]


def test_to_gray_12bit_in_16bit_container_not_near_black() -> None:
    """A 12-bit scan stored in 16 bits keeps its white point at 255."""
    image = Image.fromarray(np.array([[0, 4095]], dtype=np.uint16))
    assert to_gray(image).tolist() == [[0, 255]]


def test_to_gray_cmyk_white_is_white() -> None:
    """Blank CMYK paper (no ink) converts to white, full key to black."""
    image = Image.new("CMYK", (2, 1), (0, 0, 0, 0))
    image.putpixel((1, 0), (0, 0, 0, 255))
    assert to_gray(image).tolist() == [[255, 0]]


@pytest.fixture
def corpus_ok() -> None:
    if not PHOTOTEST.is_file() or not TWO_PAGE_PDF.is_file():
        pytest.fail(f"research corpus not found at {CORPUS}; set CUSTODY_CORPUS")
