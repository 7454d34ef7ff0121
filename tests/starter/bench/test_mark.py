"""The invisible per-release page mark, measured on real scanned pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from custody.errors import MarkInvalid
from starter.bench.mark import TRANSFORMS, detect_mark, embed_mark, measure_mark, psnr, release_tag

PAGES = ("funsd_82092117.png", "funsd_83443897.png")


@pytest.fixture(scope="module")
def pages(corpus: Path) -> list[np.ndarray]:
    """Real scanned form pages, read in place as 8-bit grey."""
    return [np.asarray(Image.open(corpus / "ocr_gt" / name).convert("L")) for name in PAGES]


def test_mark_embed_then_detect_among_candidates(pages: list[np.ndarray]) -> None:
    """An untouched marked page names its own tag among decoys; the unmarked page names none."""
    tag, decoys = release_tag("0123456789abcdef" * 2), [7, 2**64 - 1, 42]
    marked = embed_mark(pages[0], tag)
    assert marked.shape == pages[0].shape and marked.dtype == np.uint8
    assert psnr(pages[0], marked) > 40
    assert detect_mark(marked, [*decoys, tag]) == tag
    assert detect_mark(pages[0], [*decoys, tag]) is None


def test_mark_measurement_runs_without_false_positives(pages: list[np.ndarray]) -> None:
    """The measurement reports every transform and no unmarked page is ever attributed."""
    report = measure_mark(pages, seed=20)
    assert {f"decode_rate_{name}" for name in TRANSFORMS} <= set(report)
    assert all(0.0 <= report[f"decode_rate_{name}"] <= 1.0 for name in TRANSFORMS)
    assert report["false_positive_rate"] == 0.0
    assert report["psnr_db_min"] > 40
    assert report["pages"] == len(pages)


def test_mark_refuses_tags_beyond_64_bits(pages: list[np.ndarray]) -> None:
    """Tags outside 0..2**64-1 raise MARK_INVALID."""
    with pytest.raises(MarkInvalid) as caught:
        embed_mark(pages[0], 2**64)
    assert caught.value.code == "MARK_INVALID"
