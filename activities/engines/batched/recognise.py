"""Recognition over the lines of many pages at once, sorted by width into calls.

A line alone, as the lane engine reads it (``rec_batch_num`` 1), is resized
to 48 px high at its own aspect (``buckets.line_width``) and decoded over
the model's columns for that width. Here the lines of every page in a batch
are sorted by that width and go through the recogniser together
(``buckets.line_groups``), each line's pixels exactly as they would be alone,
then padded to the call's width; before decoding, each line's columns past
its own are dropped (``buckets.line_steps``), and RapidOCR's CTC decoder runs
with the ratios a lone line has, so word positions come out the same too.

On CUDA with IOBinding the scores stay on the GPU and the CTC head
(``ctc_head``) hands back only each column's best character and its score.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from activities.engines.batched.buckets import line_groups, line_steps, line_width
from activities.engines.batched.sessions import Model

_HEIGHT = 48

#: A line's reading: (text, score) and RapidOCR's ``WordInfo`` for its word boxes.
Reading = tuple[tuple[str, float], Any]


class LineReader:
    """The recogniser, its CTC decoder, and how lines are grouped into calls."""

    def __init__(
        self, model: Model, head: Model | None, floor_px: int, line_px: int, most: int
    ) -> None:
        from rapidocr.ch_ppocr_rec.utils import CTCLabelDecode

        meta = model.session.get_modelmeta().custom_metadata_map
        self._decoder = CTCLabelDecode(character=meta["character"].splitlines())
        self._model = model
        self._head = head  # None: columns are taken on the host
        self._floor_px = floor_px
        self._line_px = line_px
        self._most = most
        self.calls = 0  # recogniser calls in the last ``read``

    def read(self, crops: list[npt.NDArray[np.uint8]], clock: Any) -> list[Reading]:
        """Each crop's reading, in the order given; ``clock`` times the stages."""
        widths = [line_width(c.shape[0], c.shape[1], self._floor_px) for c in crops]
        self.calls = 0
        found: list[Reading | None] = [None] * len(crops)
        for width, members in line_groups(widths, self._line_px, self._most):
            with clock("rec_pre"):
                batch = np.zeros((len(members), 3, _HEIGHT, width), dtype=np.float32)
                for row, i in enumerate(members):
                    line = _normalised(crops[i], widths[i])
                    batch[row, :, :, : line.shape[2]] = line
            with clock("rec_model"):
                index, prob = self._columns(batch)
            with clock("rec_decode"):
                for row, i in enumerate(members):
                    found[i] = self._decoded(index[row], prob[row], crops[i], widths[i])
            self.calls += 1
        return [r for r in found if r is not None]

    def _columns(
        self, batch: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Each column's best character and its score: on the device, or here."""
        if self._head is not None:
            index, prob = self._head.run_value(self._model.run_bound(batch))
            return index, prob
        scores = self._model.run(batch)
        return scores.argmax(axis=2), scores.max(axis=2)

    def _decoded(
        self,
        index: npt.NDArray[np.int64],
        prob: npt.NDArray[np.float32],
        crop: npt.NDArray[np.uint8],
        width: int,
    ) -> Reading:
        """Decode over the line's own columns with the ratios RapidOCR gives a lone line."""
        ratio = crop.shape[1] / crop.shape[0]
        steps = line_steps(width)
        lines, words = self._decoder.decode(
            index[None, :steps],
            prob[None, :steps],
            True,
            wh_ratio_list=(ratio,),
            max_wh_ratio=max(self._floor_px / _HEIGHT, ratio),
            remove_duplicate=True,
        )
        return lines[0], words[0]


def _normalised(crop: npt.NDArray[np.uint8], width: int) -> npt.NDArray[np.float32]:
    """The crop as ``TextRecognizer.resize_norm_img`` makes it for a lone line (unpadded)."""
    ratio = crop.shape[1] / crop.shape[0]
    resized_w = min(math.ceil(_HEIGHT * ratio), width)
    image = cv2.resize(crop, (resized_w, _HEIGHT)).astype("float32")
    image = image.transpose((2, 0, 1)) / 255
    image -= 0.5
    image /= 0.5
    # A line narrower than the floor is padded to it alone too: keep its zeros.
    padded = np.zeros((3, _HEIGHT, width), dtype=np.float32)
    padded[:, :, :resized_w] = image
    return padded
