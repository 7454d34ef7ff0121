"""The degraded classes of ``custody bench ocr``: seeded, and each one really degrades."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from activities.pages.raster import GrayPage, iter_pages
from starter.bench.degrade import KINDS, MAX_SKEW_DEG, degrade
from starter.bench.variants import class_of, pick


@pytest.fixture(scope="module")
def page(corpus: Path) -> GrayPage:
    """The first page of a FUNSD form: printed text, lines and boxes on white."""
    _, image = next(iter(iter_pages(corpus / "ocr_gt" / "funsd_82251504.png", "image/png", 200)))
    return image


@pytest.mark.parametrize("kind", KINDS)
def test_degrade_is_deterministic_per_seed(page: GrayPage, kind: str) -> None:
    """The same seed and key give the same pixels; other seeds give other pages."""
    first, again = degrade(page, kind, 7, "doc:0"), degrade(page, kind, 7, "doc:0")
    assert np.array_equal(first.image, again.image) and first.detail == again.detail
    others = [degrade(page, kind, seed, "doc:0").image for seed in range(4)]
    assert any(o.shape != others[0].shape or not np.array_equal(o, others[0]) for o in others)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "skew"])
def test_degrade_changes_the_page_measurably(page: GrayPage, kind: str) -> None:
    """Every kind but skew keeps the page's size and changes a measurable share of pixels."""
    out = degrade(page, kind, 0, "doc:0").image
    assert out.shape == page.shape and out.dtype == np.uint8
    changed = np.abs(out.astype(np.int16) - page.astype(np.int16)) > 16
    # Measured 2026-11-30 on this page: 0.3 % (handwriting) to 98 % (low contrast).
    assert changed.mean() > 0.001


def test_degrade_skew_turns_pages_within_five_degrees(page: GrayPage) -> None:
    """Skew turns each page by 1 to 5 degrees either way, on a canvas grown to fit."""
    angles = []
    for n in range(12):
        done = degrade(page, "skew", 0, f"doc:{n}")
        angle = float(done.detail["angle_deg"])
        assert 1.0 <= abs(angle) <= MAX_SKEW_DEG
        assert done.image.shape[0] > page.shape[0] and done.image.shape[1] > page.shape[1]
        angles.append(angle)
    assert min(angles) < 0 < max(angles)


def test_degrade_fax_pages_are_one_bit(page: GrayPage) -> None:
    """A fax page holds only black and white."""
    assert set(np.unique(degrade(page, "fax", 0, "doc:0").image)) <= {0, 255}


def test_degrade_stamp_adds_its_words_to_the_truth(page: GrayPage) -> None:
    """A stamp's words join the truth and its ink lands on the page's text."""
    done = degrade(page, "stamp", 3, "doc:0")
    word, *date = done.extra_truth.split()
    assert word.isalpha() and len(date) == 3 and date[2].isdigit()
    x, y = int(done.detail["x"]), int(done.detail["y"])
    patch = (slice(y, y + 40), slice(x, x + 120))
    assert (page[patch] < 128).any()  # placed over ink, not blank margin


def test_degrade_low_contrast_squeezes_the_range(page: GrayPage) -> None:
    """Faded pages keep their darkest ink well above black and their paper below white."""
    out = degrade(page, "low_contrast", 0, "doc:0").image
    assert np.percentile(out, 1) > 90 and np.percentile(out, 99) < 240


def test_pick_covers_classes_round_robin() -> None:
    """Picking spreads over the classes before taking a second of any, the same for a seed."""
    docs = [
        Path(n) for n in ("funsd_a.png", "funsd_b.png", "sroie_1.jpg", "sroie_2.jpg", "tess_p.tif")
    ]
    picked = pick(docs, 3, seed=1)
    assert sorted({class_of(p) for p in picked}) == ["forms", "phototest", "receipts"]
    assert pick(docs, 3, seed=1) == picked and len(pick(docs, 9, seed=1)) == 5
