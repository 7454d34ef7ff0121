"""Tests for examples/make_examples.py, the generator of the shipped sample documents."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "make_examples.py"
DOCUMENTS = ("referral.png", "discharge.pdf", "fax.tif")
FORM_FEED_LINE = "\n\f\n"


def run_script(out: Path) -> None:
    """Run the generator as `make run` does, through the CLI, into `out`."""
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, timeout=120)


def digests(directory: Path) -> dict[str, str]:
    """Map every file name in `directory` to the sha256 of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generate the examples once for the whole module."""
    out = tmp_path_factory.mktemp("examples")
    run_script(out)
    return out


def test_make_examples_writes_documents_and_truths(generated: Path) -> None:
    """The script writes the three documents plus a same-stem .txt truth for each."""
    expected = set(DOCUMENTS) | {Path(name).stem + ".txt" for name in DOCUMENTS}
    assert {p.name for p in generated.iterdir()} == expected


def test_referral_png_is_grayscale_8bit(generated: Path) -> None:
    """The referral is an 8-bit grayscale PNG at about 150 DPI."""
    with Image.open(generated / "referral.png") as image:
        assert (image.format, image.mode, image.size) == ("PNG", "L", (1275, 900))
        assert round(image.info["dpi"][0]) == 150


def test_fax_tiff_is_bilevel_group4(generated: Path) -> None:
    """The fax is a mode "1" CCITT Group 4 TIFF at 200 DPI, the form that trips bare EasyOCR."""
    with Image.open(generated / "fax.tif") as image:
        assert (image.format, image.mode) == ("TIFF", "1")
        assert image.info["compression"] == "group4"
        assert image.info["dpi"] == (200, 200)


def test_discharge_pdf_has_two_pages(generated: Path) -> None:
    """The discharge summary PDF opens in pdfium with exactly two pages."""
    pdf = pdfium.PdfDocument(generated / "discharge.pdf")
    try:
        assert len(pdf) == 2
    finally:
        pdf.close()


def test_discharge_pdf_dates_are_pinned(generated: Path) -> None:
    """The PDF carries the fixed dates, not Pillow's wall-clock default that breaks determinism."""
    pdf = pdfium.PdfDocument(generated / "discharge.pdf")
    try:
        metadata = pdf.get_metadata_dict()
    finally:
        pdf.close()
    assert metadata["CreationDate"] == metadata["ModDate"] == "D:20240314000000Z"


def test_ground_truths_are_non_empty(generated: Path) -> None:
    """Every truth file holds text on every page, with no blank lines inside a page."""
    for name in DOCUMENTS:
        text = (generated / name).with_suffix(".txt").read_text(encoding="utf-8")
        pages = text.removesuffix("\n").split(FORM_FEED_LINE)
        assert all(page and "" not in page.split("\n") for page in pages), name


def test_ground_truth_pages_match_document_pages(generated: Path) -> None:
    """The discharge truth has two form-feed-separated pages naming their page numbers."""
    text = (generated / "discharge.txt").read_text(encoding="utf-8")
    pages = text.removesuffix("\n").split(FORM_FEED_LINE)
    assert len(pages) == 2
    assert "Page 1 of 2" in pages[0].split("\n")
    assert "Page 2 of 2" in pages[1].split("\n")


def test_ground_truths_are_ascii(generated: Path) -> None:
    """Truths stay ASCII, so no glyph is missing from the font and OCR scoring stays simple."""
    for name in DOCUMENTS:
        assert (generated / name).with_suffix(".txt").read_text(encoding="utf-8").isascii()


def test_make_examples_is_byte_deterministic(generated: Path, tmp_path: Path) -> None:
    """A second run into a fresh directory produces byte-identical files."""
    run_script(tmp_path)
    assert digests(tmp_path) == digests(generated)
