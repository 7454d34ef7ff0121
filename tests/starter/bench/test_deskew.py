"""Deskewing: the skew angle is found and undone; straight pages are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from activities.pages.raster import GrayPage, iter_pages
from starter.bench.degrade import rotate
from starter.bench.deskew import deskew, estimate_skew


def _lines_page() -> GrayPage:
    """A straight page of twenty printed lines."""
    page = Image.new("L", (1200, 1600), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=28)
    for n in range(20):
        draw.text(
            (80, 100 + 70 * n), f"Line {n} of the quarterly report, page one", fill=0, font=font
        )
    return np.asarray(page, dtype=np.uint8)


@pytest.mark.parametrize("angle", [-4.6, -2.0, 1.2, 3.5])
def test_deskew_finds_the_angle_a_page_was_turned_by(angle: float) -> None:
    """The estimate lands within 0.15 degrees of the turn, and deskewing straightens it."""
    turned = rotate(_lines_page(), angle)
    assert estimate_skew(turned) == pytest.approx(angle, abs=0.15)
    straight, found = deskew(turned)
    assert found == pytest.approx(angle, abs=0.15)
    assert abs(estimate_skew(straight)) <= 0.15


def test_deskew_leaves_a_straight_page_untouched() -> None:
    """A page under the minimum angle comes back as the same array, angle 0."""
    page = _lines_page()
    out, found = deskew(page)
    assert out is page and found == 0.0


def test_deskew_blank_page_has_no_skew() -> None:
    """A page without ink measures 0 rather than a guess."""
    assert estimate_skew(np.full((500, 400), 255, np.uint8)) == 0.0


def test_deskew_measures_a_real_scan_turned_further(corpus: Path) -> None:
    """On a FUNSD form, a 3-degree turn adds 3 degrees to the scan's own skew."""
    path = corpus / "ocr_gt" / "funsd_82251504.png"
    _, page = next(iter(iter_pages(path, "image/png", 200)))
    own = estimate_skew(page)
    assert estimate_skew(rotate(page, 3.0)) == pytest.approx(own + 3.0, abs=0.2)
