"""PP-OCRv6 kept loaded: a helper process per engine lane, fed one page after another.

Like ``activities.engines.tess_server``, and for the same reasons: the models
(about 30 MB of ONNX) load once per lane, not per page; the helper runs on its
lane's core with one onnxruntime thread, away from the worker's own threads;
and a page past its deadline is cancelled by killing the helper, since
onnxruntime cannot be interrupted mid-run from outside. The worker lives on,
and the next page starts a fresh helper.

The pipe protocol, little-endian, framed as activities.engines.lane_helper's: the helper's first
frame answers the start (0: a JSON object naming the runtime, 1: why it could
not start); a request is ``<IIII`` (width, height, detector side, detector
limit: 0 caps the long side, 1 raises the short side) and ``width * height``
bytes of 8-bit grey pixels; each answer is a frame holding JSON ``{"lines":
[[quad, text, score, words]], "flipped": bool}``, every word's box already
tightened to its ink (``rapid_reader``), or why recognition failed.
Page text only ever crosses this pipe; a failure names the library's
complaint, never the text.
"""

from __future__ import annotations

import json
import struct
import sys
from typing import Any

import numpy as np
import numpy.typing as npt

from activities.engines.lane_helper import (
    _FAILED,
    _OK,
    LaneHelper,
    reply,
    requests,
)
from activities.engines.rapid_wire import Line

_REQUEST = struct.Struct("<IIII")

# One thread for every runtime that might start its own pool: a lane is one core.
_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class RapidHelper(LaneHelper):
    """One helper process for ``config`` (RapidOCR's dotted params), restarted after it fails."""

    def __init__(
        self, config: dict[str, Any], *, orientation: bool = True, start_timeout_s: float = 120.0
    ) -> None:
        turn = "turn" if orientation else "upright"  # check each page's orientation, or not
        argv = [sys.executable, "-m", __name__, json.dumps(config), turn]
        super().__init__(argv, "rapidocr", _ONE_THREAD, start_timeout_s)
        self.runtime: dict[str, Any] = {}  # what the helper reported at start

    def start(self) -> dict[str, Any]:
        """Start the helper now (a missing model fails here); what it runs on."""
        self._running()
        return self.runtime

    def read(
        self, gray: npt.NDArray[np.uint8], timeout_s: float, side: int, limit: int
    ) -> tuple[list[Line], bool]:
        """The page's text lines (quad, text, score, words) and whether it was read upside down."""
        height, width = gray.shape
        # No cancel inside onnxruntime: past the deadline the helper is killed.
        payload = self._exchange(_REQUEST.pack(width, height, side, limit), gray, timeout_s)
        found = json.loads(payload)
        lines: list[Line] = [tuple(line) for line in found["lines"]]
        return lines, bool(found["flipped"])

    def _started(self, payload: bytes) -> None:
        self.runtime = json.loads(payload)


# -- the helper process --------------------------------------------------------------


def _serve(config_json: str, turn: str) -> int:
    from activities.engines import rapid_reader  # heavy: cv2, onnxruntime, rapidocr

    try:
        reader = rapid_reader.Reader(json.loads(config_json), orientation=turn == "turn")
    except Exception as err:  # any import or model failure: say it, once
        reply(_FAILED, f"{type(err).__name__}: {err}".encode())
        return 2
    reply(_OK, json.dumps(reader.runtime()).encode())
    for (width, height, side, limit), pixels in requests(_REQUEST):
        gray = np.frombuffer(pixels, dtype=np.uint8).reshape(height, width)
        try:
            lines, flipped = reader.read(gray, side, limit)
        except Exception as err:  # the library's complaint, never the page's text
            reply(_FAILED, type(err).__name__.encode())
            continue
        reply(_OK, json.dumps({"lines": lines, "flipped": flipped}).encode())
    return 0  # the worker closed the pipe or exited


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1], sys.argv[2]))
