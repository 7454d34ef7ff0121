"""Inside the batched helper (``activities.engines.batched.server``): many pages, few calls.

``BatchReader.read`` takes a batch of pages and answers what the lane
reader (``activities.engines.rapid_reader.Reader``) answers for each alone:
its lines with their words boxed to the ink, and whether it was read turned
over. The work between model calls is RapidOCR's and the lane reader's own
code, page by page; only the calls are shared: one detector call per shape
bucket (``detect``), one recogniser call per width group over the lines of
every page (``recognise``), one classifier call for every page's orientation
vote, and one more round for the pages the vote turns over.

A ``Clock`` adds up seconds per stage, the profile ``custody bench ocr
--device`` reports (docs/ocr-benchmark.md, "Where the time goes").
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from activities.engines.batched.detect import Detector, Prepared
from activities.engines.batched.recognise import LineReader, Reading
from activities.engines.rapid_reader import (
    boxed,
    lines_of,
    mean_score,
    sample_crops,
    turn_line,
    turned_by_vote,
)
from activities.engines.rapid_wire import Line

Page = tuple[npt.NDArray[np.uint8], int, int]  # grey pixels, detector side, limit mode
Read = tuple[list[Line], bool]  # the page's lines and whether it was read turned over


class Clock:
    """Seconds per stage, and counts, since the last ``take``."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - started

    def take(self) -> dict[str, Any]:
        """The totals so far, rounded, and a fresh start."""
        taken = {
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
            "counts": dict(self.counts),
        }
        self.seconds.clear()
        self.counts.clear()
        return taken


class BatchReader:
    """Detector, recogniser and classifier around RapidOCR's own per-page steps."""

    def __init__(
        self, ocr: Any, detector: Detector, lines: LineReader, cls: Any, orientation: bool
    ) -> None:
        self._ocr = ocr
        self._detector = detector
        self._lines = lines
        self._cls = cls  # (crops) -> [(label, score)]: one classifier call
        self._orientation = orientation
        self.clock = Clock()

    def read(self, pages: list[Page]) -> list[Read]:
        """Every page's lines, boxed to the ink, and whether it was read turned over."""
        self.clock.counts["pages"] += len(pages)
        colour = [cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR) for gray, _, _ in pages]
        upright = self._read_lines(pages)
        turned = self._turned_over(colour, upright) if self._orientation else set()
        again = self._read_lines([(_rotated(pages[i][0]), *pages[i][1:]) for i in sorted(turned)])
        results: list[Read] = [(lines, False) for lines in upright]
        for i, lines in zip(sorted(turned), again, strict=True):
            if mean_score(lines) > mean_score(upright[i]):
                height, width = pages[i][0].shape
                results[i] = ([turn_line(line, width, height) for line in lines], True)
        with self.clock("tighten"):
            return [
                ([boxed(page[0], line) for line in lines], flipped)
                for page, (lines, flipped) in zip(pages, results, strict=True)
            ]

    def _read_lines(self, pages: list[Page]) -> list[list[Line]]:
        """Detection and recognition for every page, as ``RapidOCR(page)`` would read each."""
        if not pages:
            return []
        with self.clock("det_pre"):
            prepared = [self._detector.prepare(*page) for page in pages]
        with self.clock("det_model"):
            maps = self._detector.maps(prepared)
        self.clock.counts["det_calls"] += self._detector.calls
        found: list[tuple[Any, list[float], list[npt.NDArray[np.uint8]]]] = []
        for page, prob in zip(prepared, maps, strict=True):
            with self.clock("det_post"):
                boxes, scores = (None, []) if prob is None else self._detector.boxes(page, prob)
            with self.clock("crop"):
                found.append(
                    (boxes, scores, [] if boxes is None else self._detector.crops(page, boxes))
                )
        readings = self._lines.read([c for _, _, crops in found for c in crops], self.clock)
        self.clock.counts["lines"] += len(readings)
        self.clock.counts["rec_calls"] += self._lines.calls
        out: list[list[Line]] = []
        for page, (boxes, scores, crops) in zip(prepared, found, strict=True):
            mine, readings = readings[: len(crops)], readings[len(crops) :]
            with self.clock("boxes"):
                out.append(self._final(page, boxes, scores, crops, mine))
        return out

    def _final(
        self, page: Prepared, boxes: Any, scores: list[float], crops: list[Any], mine: list[Reading]
    ) -> list[Line]:
        """RapidOCR's last step for one page: boxes mapped back, word boxes, score filter."""
        from rapidocr.ch_ppocr_cls.utils import TextClsOutput
        from rapidocr.ch_ppocr_det.utils import TextDetOutput
        from rapidocr.ch_ppocr_rec.typings import TextRecOutput

        if boxes is None:
            return []
        texts: Any = tuple(text for (text, _), _ in mine)  # RapidOCR types it as one string
        confidences = [score for (_, score), _ in mine]
        rec = TextRecOutput(crops, texts, confidences, tuple(w for _, w in mine), 0.0)
        det = TextDetOutput(page.image, boxes, scores)
        out = self._ocr.build_final_output(
            page.original, det, TextClsOutput(), rec, crops, page.record
        )
        return lines_of(out, self._ocr.return_word_box)

    def _turned_over(self, colour: list[Any], upright: list[list[Line]]) -> set[int]:
        """The pages whose sampled lines the classifier, in one call, finds turned over."""
        with self.clock("cls"):
            samples = [
                sample_crops(page, lines) for page, lines in zip(colour, upright, strict=True)
            ]
            verdicts = self._cls([c for crops in samples for c in crops])
        turned: set[int] = set()
        for i, crops in enumerate(samples):
            mine, verdicts = verdicts[: len(crops)], verdicts[len(crops) :]
            if crops and turned_by_vote(mine):
                turned.add(i)
        return turned


def _rotated(gray: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The page turned 180 degrees (the same pixels as ``cv2.rotate``'s)."""
    return np.ascontiguousarray(gray[::-1, ::-1])
