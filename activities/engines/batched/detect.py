"""Detection over many pages at once: each page prepared alone, run in shape buckets.

Every step but the model call is RapidOCR's own, in its order, so a page's
boxes are those ``RapidOCR.__call__`` finds for it alone: the page resized
into RapidOCR's bounds and padded as it pads (``preprocess_img``,
``apply_vertical_padding``), resized to the engine's detector side and
normalised (``DetPreProcess``); then, per page, the probability map cut back
to the page's own shape, ``DBPostProcess`` and ``TextDetector.sorted_boxes``.
Only the call between is shared: pages in one bucket (``buckets.DetBuckets``)
go through the model together, each padded to the bucket with paper-white.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from activities.engines.batched.buckets import DetBuckets, batch_size
from activities.engines.batched.sessions import Model
from activities.engines.rapid_wire import LIMIT_MAX

#: Paper-white after RapidOCR's normalisation ((255 / 255 - 0.5) / 0.5).
_WHITE = 1.0


@dataclass
class Prepared:
    """One page as the detector takes it, and what maps its boxes back onto the page."""

    original: npt.NDArray[np.uint8]  # the page, 3-channel, as RapidOCR loads it
    image: npt.NDArray[np.uint8]  # resized into bounds and padded: where crops come from
    record: dict[str, Any]  # RapidOCR's op record: the resize ratios and the padding
    tensor: npt.NDArray[np.float32] | None  # 1 x 3 x H x W, normalised; None: nothing to read


class Detector:
    """RapidOCR's detection steps around one shared detector model."""

    def __init__(
        self, ocr: Any, model: Model, buckets: DetBuckets, sizes: list[int] | None = None
    ) -> None:
        from rapidocr.ch_ppocr_det.utils import DBPostProcess

        self._ocr = ocr
        self._model = model
        self._buckets = buckets
        # Batch sizes a call is padded up to (blank pages), so a GPU sees few shapes;
        # None: every batch as it comes (a CPU gains nothing from blank pages).
        self._sizes = sizes
        self.calls = 0  # detector calls in the last ``maps``
        det = ocr.cfg.Det
        self._mean, self._std = det.get("mean"), det.get("std")
        self._post = DBPostProcess(
            thresh=det.get("thresh", 0.3),
            box_thresh=det.get("box_thresh", 0.5),
            max_candidates=det.get("max_candidates", 1000),
            unclip_ratio=det.get("unclip_ratio", 1.6),
            use_dilation=det.get("use_dilation", True),
            score_mode=det.get("score_mode", "fast"),
        )

    def prepare(self, gray: npt.NDArray[np.uint8], side: int, limit: int) -> Prepared:
        """The page resized, padded and normalised as RapidOCR would for ``side``/``limit``."""
        from rapidocr.ch_ppocr_det.utils import DetPreProcess
        from rapidocr.utils.process_img import apply_vertical_padding

        ocr = self._ocr
        original = ocr.load_img(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR))
        image, record = ocr.preprocess_img(original)
        if ocr.cfg.Global.use_vertical_padding:
            image, record = apply_vertical_padding(
                image, record, ocr.width_height_ratio, ocr.min_height
            )
        else:
            record["padding_1"] = {"top": 0, "left": 0}
        kind = "max" if limit == LIMIT_MAX else "min"
        tensor = DetPreProcess(side, kind, self._mean, self._std)(image)
        return Prepared(original, image, record, tensor)

    def maps(self, pages: list[Prepared]) -> list[npt.NDArray[np.float32] | None]:
        """Each page's probability map (1 x 1 x H x W), pages of a bucket in one call."""
        found: list[npt.NDArray[np.float32] | None] = [None] * len(pages)
        groups = self._by_bucket(pages)
        self.calls = len(groups)
        for shape, members in groups.items():
            rows = batch_size(len(members), self._sizes) if self._sizes else len(members)
            batch = np.full((rows, 3, *shape), _WHITE, dtype=np.float32)
            for row, i in enumerate(members):
                tensor = pages[i].tensor
                if tensor is not None:
                    batch[row, :, : tensor.shape[2], : tensor.shape[3]] = tensor[0]
            out = self._model.run(batch)
            for row, i in enumerate(members):
                height, width = shape_of(pages[i])
                found[i] = out[row : row + 1, :, :height, :width]
        return found

    def plan(self) -> dict[str, float]:
        """Run every planned bucket at every batch size once, now: seconds per bucket."""
        seconds: dict[str, float] = {}
        for height, width in self._buckets.planned():
            started = time.perf_counter()
            for rows in self._sizes or [1]:
                self._model.run(np.full((rows, 3, height, width), _WHITE, dtype=np.float32))
            seconds[f"{height}x{width}"] = round(time.perf_counter() - started, 3)
        return seconds

    def boxes(self, page: Prepared, prob: npt.NDArray[np.float32]) -> tuple[Any, list[float]]:
        """The page's text boxes in reading order (``TextDetector``), and their scores."""
        from rapidocr.ch_ppocr_det.main import TextDetector

        boxes, scores = self._post(prob, page.image.shape[:2])
        if len(boxes) < 1:
            return None, []
        return TextDetector.sorted_boxes(boxes), scores

    def crops(self, page: Prepared, boxes: Any) -> list[npt.NDArray[np.uint8]]:
        """Each box's line, cut upright from the padded page (``RapidOCR.crop_text_regions``)."""
        crops: list[npt.NDArray[np.uint8]] = self._ocr.crop_text_regions(page.image, boxes)
        return crops

    def _by_bucket(self, pages: list[Prepared]) -> dict[tuple[int, int], list[int]]:
        groups: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, page in enumerate(pages):
            if page.tensor is not None:
                groups[self._buckets.bucket(*shape_of(page))].append(i)
        return groups


def shape_of(page: Prepared) -> tuple[int, int]:
    """The detector input's height and width (0 x 0 for a page with nothing to read)."""
    if page.tensor is None:
        return 0, 0
    _, _, height, width = page.tensor.shape
    return int(height), int(width)
