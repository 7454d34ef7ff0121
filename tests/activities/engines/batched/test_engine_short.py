"""The batched engine's short form (the default run): two pages in one batch, on the CPU.

Real rapidocr models, real helper processes, real corpus pages; no stand-ins.
The long form, every corpus document and the faults, is ``test_engine.py``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from activities.engines.batched.engine import BatchedRapidEngine
from activities.engines.batched.tuning import BatchTuning
from activities.engines.rapid import RapidOcrEngine
from activities.pages.raster import GrayPage
from custody.models import PageText

pytestmark = pytest.mark.timeout(600)

_PAGES = ("funsd_82251504.png", "tess_phototest.tif")


def _page(corpus: Path, name: str) -> GrayPage:
    from starter.bench.ocr import _pages

    return next(img for _, img in _pages(corpus / "ocr_gt" / name, 200))


def test_two_pages_read_in_one_batch_as_each_read_alone(corpus: Path) -> None:
    """Both pages go in one batch (one helper, a 2 s gather) and each reads as the lane
    engine reads it alone: same words and boxes, confidences within 1e-4."""
    pages = [_page(corpus, name) for name in _PAGES]
    lane = RapidOcrEngine(1, device="cpu")
    batched = BatchedRapidEngine(1, device="cpu", batch=BatchTuning(pages=2, wait_ms=2000))
    try:
        alone = [lane.recognise(page, n) for n, page in enumerate(pages)]
        batched.warm_up()
        batched.take_stats()
        with ThreadPoolExecutor(2) as pool:
            together = list(pool.map(batched.recognise, pages, range(2)))
        stats = batched.take_stats()
    finally:
        lane.close()
        batched.close()
    assert stats["sizes"] == {"2": 1} and stats["failed"] == 0
    for got, want in zip(together, alone, strict=True):
        assert _boxed(got) == _boxed(want) and got.text == want.text
        assert [w.confidence for w in got.words] == pytest.approx(
            [w.confidence for w in want.words], abs=1e-4
        )
    assert batched.params()["batch_pages"] == 2 and batched.params()["provider"] == "cpu"


def _boxed(page: PageText) -> list[tuple[str, list[list[int]]]]:
    return [(w.text, w.box) for w in page.words]
