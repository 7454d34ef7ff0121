"""Pages rendered in the locked-down child: the same bitmaps as in-process, bounded."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import activities.inspect.untrusted as untrusted
from activities.inspect.sandboxed import iter_pages_sandboxed
from activities.pages.raster import iter_pages
from custody.errors import Code, DocumentRejected
from custody.settings import Limits

OCR_GT = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "ocr_gt"
PHOTOTEST = OCR_GT / "tess_phototest.tif"
TWO_PAGE_PDF = OCR_GT / "funsdpdf_2pages_86220490_86328049.pdf"


def _same(path: Path, media_type: str, dpi: int, start: int = 0) -> None:
    ours = list(iter_pages_sandboxed(path, media_type, dpi, start))
    theirs = list(iter_pages(path, media_type, dpi, start))
    assert [index for index, _ in ours] == [index for index, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        assert a.dtype == np.uint8 and a.flags.writeable
        assert np.array_equal(a, b)


def test_sandboxed_pdf_pages_match_in_process_render() -> None:
    """Both pages of a PDF come back from the child bit-identical to ``iter_pages``."""
    _same(TWO_PAGE_PDF, "application/pdf", 100)


def test_sandboxed_pdf_start_resumes_after_stored_pages() -> None:
    """``start=1`` yields only the second page, as ``iter_pages`` does."""
    _same(TWO_PAGE_PDF, "application/pdf", 72, start=1)


def test_sandboxed_tiff_frames_match_in_process_decode(tmp_path: Path) -> None:
    """A bilevel fax TIFF and a three-frame mixed-mode TIFF decode the same in the child."""
    _same(PHOTOTEST, "image/tiff", 200)
    path = tmp_path / "three.tif"
    first = Image.new("1", (40, 30), 1)
    rest = [Image.new("L", (50, 20), 128), Image.new("RGB", (60, 10), (255, 0, 0))]
    first.save(path, save_all=True, append_images=rest, compression="tiff_deflate")
    _same(path, "image/tiff", 200)


def test_sandboxed_page_over_pixel_budget_is_rejected() -> None:
    """A page larger than the policy's pixel limit is refused in the child, not rendered."""
    with pytest.raises(DocumentRejected) as caught:
        list(
            iter_pages_sandboxed(PHOTOTEST, "image/tiff", 200, limits=Limits(max_page_pixels=1000))
        )
    assert caught.value.code is Code.PIXEL_LIMIT


def test_sandboxed_garbage_is_no_page(tmp_path: Path) -> None:
    """Bytes pdfium cannot open end the render without a page and without a worker crash."""
    path = tmp_path / "bad.pdf"
    path.write_bytes(b"%PDF-1.7\n" + os.urandom(2048))
    with pytest.raises((DocumentRejected, RuntimeError)):
        list(iter_pages_sandboxed(path, "application/pdf", 100))


def test_sandboxed_unknown_media_type_is_value_error() -> None:
    """A media type validation never admits is refused before any child starts."""
    with pytest.raises(ValueError, match="no page reader"):
        iter_pages_sandboxed(PHOTOTEST, "image/gif", 200)


def test_sandboxed_abandoned_render_leaves_no_child() -> None:
    """Closing the iterator after one page kills the rendering child."""
    pages = iter_pages_sandboxed(TWO_PAGE_PDF, "application/pdf", 100)
    assert next(pages)[0] == 0
    zygote = untrusted._ZYGOTE._proc
    assert zygote is not None
    children = Path(f"/proc/{zygote.pid}/task/{zygote.pid}/children")
    assert children.read_text().split()  # the child waits to send page 1
    pages.close()
    deadline = time.monotonic() + 10
    while children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert children.read_text().split() == []
