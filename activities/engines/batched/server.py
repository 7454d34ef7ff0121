"""The batched PP-OCRv6 helper: one process, models loaded once, fed batches of pages.

Like the lane helper (``activities.engines.rapid_server``), and for the same
reasons: the models load once, the worker's own threads stay free, and a
batch past its deadline is cancelled by killing the process. What differs is
that a request carries many pages, and the helper may own a GPU.

The pipe protocol, little-endian, framed as ``activities.engines.lane_helper``'s:
the first frame answers the start (0: JSON naming the runtime, its providers
and the seconds each detector bucket took to plan; 1: why it could not
start). A request is a ``<I>`` page count, then per page ``<IIII>`` (width,
height, detector side, detector limit) and its ``width * height`` grey bytes;
its answer is JSON ``{"pages": [{"lines": [...], "flipped": bool}, ...],
"stages": {...}}``, or a failure naming the exception's type only. A count of
0 asks for onnxruntime's profile (``{"profile": ...}``), which ends it.
Page text only ever crosses this pipe.
"""

from __future__ import annotations

import json
import struct
import sys
from typing import Any

import numpy as np

from activities.engines.lane_helper import _FAILED, _OK, COUNT, LaneHelper, batches, pixels, reply
from activities.engines.rapid_wire import Line

_REQUEST = struct.Struct("<IIII")
_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: One page for the helper: grey pixels, detector side and limit mode.
PageIn = tuple[np.ndarray[Any, np.dtype[np.uint8]], int, int]


class BatchHelper(LaneHelper):
    """One batched helper process for ``config`` (RapidOCR's params) and ``options``."""

    def __init__(
        self, config: dict[str, Any], options: dict[str, Any], start_timeout_s: float = 600.0
    ) -> None:
        argv = [sys.executable, "-m", __name__, json.dumps(config), json.dumps(options)]
        super().__init__(argv, "rapidocr batch", _ONE_THREAD, start_timeout_s)
        self.runtime: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        """Start the helper now (models load, buckets plan); what it runs on."""
        self._running()
        return self.runtime

    def read(
        self, pages: list[PageIn], timeout_s: float
    ) -> tuple[list[tuple[list[Line], bool]], dict[str, Any]]:
        """Each page's lines and whether it was read turned over; the batch's stage clock."""
        parts: list[bytes | memoryview] = [COUNT.pack(len(pages))]
        for gray, side, limit in pages:
            height, width = gray.shape
            parts += [_REQUEST.pack(width, height, side, limit), pixels(gray)]
        found = json.loads(self._exchange_parts(parts, timeout_s))
        read = [([tuple(line) for line in p["lines"]], bool(p["flipped"])) for p in found["pages"]]
        return read, found["stages"]

    def profile(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """onnxruntime's profile of each model so far (empty when not profiling); ends it."""
        found: dict[str, dict[str, Any]] = json.loads(
            self._exchange_parts([COUNT.pack(0)], timeout_s)
        )
        return found["profile"]

    def _started(self, payload: bytes) -> None:
        self.runtime = json.loads(payload)


# -- the helper process --------------------------------------------------------------


def _serve(config_json: str, options_json: str) -> int:
    from activities.engines.batched import build  # heavy: cv2, onnxruntime, rapidocr

    try:
        built = build.reader(json.loads(config_json), json.loads(options_json))
    except Exception as err:  # any import, model or provider failure: say it, once
        reply(_FAILED, f"{type(err).__name__}: {err}".encode())
        return 2
    reply(_OK, json.dumps(built.runtime).encode())
    reader = built.reader
    for batch in batches(_REQUEST):
        if not batch:
            reply(_OK, json.dumps({"profile": build.profile(built)}).encode())
            continue
        pages = [
            (np.frombuffer(px, dtype=np.uint8).reshape(height, width), side, limit)
            for (width, height, side, limit), px in batch
        ]
        try:
            read = reader.read(pages)
        except Exception as err:  # the library's complaint, never the pages' text
            reply(_FAILED, type(err).__name__.encode())
            continue
        answer = {"pages": [{"lines": lines, "flipped": f} for lines, f in read]}
        reply(_OK, json.dumps(answer | {"stages": reader.clock.take()}).encode())
    return 0  # the worker closed the pipe or exited


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1], sys.argv[2]))
