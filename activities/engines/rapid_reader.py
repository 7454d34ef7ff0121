"""Inside the PP-OCRv6 helper (``activities.engines.rapid_server``): RapidOCR loaded once.

Pages are read without the angle classifier: on the shared corpus it turned
correctly upright lines over and cost word F1 (0.929 with it, 0.956 without,
docs/ocr-benchmark.md) as well as time. Orientation is decided per page
instead: the classifier looks at a few of the page's longest lines, and only
when most of them read upside down is the page turned and read again, the
reading with the higher mean score kept.

Each line's words leave the helper with their boxes tightened to the ink
(``activities.engines.rapid_words``): that is per-word numpy work on the page,
and done here it runs on the lane's own core, not in the worker process, where
it would queue for the GIL behind every other document's pages (the pipeline's
overhead, docs/ocr-benchmark.md).

Only this module imports cv2, onnxruntime and rapidocr, and only the helper
imports it.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from activities.engines.rapid_wire import LIMIT_MAX, Line
from activities.engines.rapid_words import line_words, tighten

_SAMPLE_LINES = 8  # lines the classifier looks at per page
_SAMPLE_MIN_ASPECT = 3.0  # a line at least this wide for its height shows its direction
# Read the page turned when more than this share of the classifier's confidence
# says "180". One line's verdict is unreliable (on phototest upright, 2 of 8
# said 180; turned over, 7 of 8, but only 4 of them above its own 0.9
# threshold), so the sample votes, and a turned reading must also score higher.
_TURNED_SHARE = 0.6


class Reader:
    """RapidOCR with its detector, recogniser and classifier loaded now, so a bad install fails."""

    def __init__(self, config: dict[str, Any], *, orientation: bool = True) -> None:
        from rapidocr import RapidOCR

        if config.get("EngineConfig.onnxruntime.use_cuda"):
            _load_cuda_libraries()
        ocr: Any = RapidOCR(params=config)  # its loaders are untyped
        self._ocr = ocr
        self._det = ocr._load_det_model()
        ocr._load_rec_model()
        self._cls = ocr._load_cls_model()
        self._word_boxes = bool(config.get("Global.return_word_box", False))
        self._orientation = orientation

    def runtime(self) -> dict[str, Any]:
        """Versions and the execution providers the detector's session really uses."""
        import onnxruntime

        return {
            "rapidocr": version("rapidocr"),
            "onnxruntime": onnxruntime.__version__,
            "providers": list(self._det.session.session.get_providers()),
        }

    def read(self, gray: npt.NDArray[np.uint8], side: int, limit: int) -> tuple[list[Line], bool]:
        """The page's lines, detected at ``side`` px (long side capped, or short side raised),
        each with its words boxed tight, in the page's own pixels."""
        lines, flipped = self._oriented(gray, side, limit)
        return [boxed(gray, line) for line in lines], flipped

    def _oriented(
        self, gray: npt.NDArray[np.uint8], side: int, limit: int
    ) -> tuple[list[Line], bool]:
        # Per page: the detector reads these on every call (TextDetector.get_preprocess).
        self._det.limit_side_len = side
        self._det.limit_type = "max" if limit == LIMIT_MAX else "min"
        page = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
        lines = self._lines(page)
        if not self._orientation or not self._upside_down(page, lines):
            return lines, False
        turned = self._lines(cv2.rotate(page, cv2.ROTATE_180))
        if mean_score(turned) <= mean_score(lines):
            return lines, False
        height, width = gray.shape
        return [turn_line(line, width, height) for line in turned], True

    def _lines(self, page: npt.NDArray[Any]) -> list[Line]:
        # A RapidOCROutput when detection and recognition both ran, else an empty result.
        out: Any = self._ocr(page, use_cls=False, return_word_box=self._word_boxes)
        return lines_of(out, self._word_boxes)

    def _upside_down(self, page: npt.NDArray[Any], lines: list[Line]) -> bool:
        crops = sample_crops(page, lines)
        return bool(crops) and turned_by_vote(self._cls(crops).cls_res or [])


def lines_of(out: Any, word_boxes: bool) -> list[Line]:
    """The lines of a ``RapidOCROutput`` (none when detection or recognition found nothing)."""
    if out.txts is None or out.boxes is None or len(out.txts) == 0:
        return []
    words = list(out.word_results) if word_boxes else []
    # rapidocr drops lines whose word list is empty, so its words line up
    # with the lines only when none was dropped; otherwise the engine splits.
    aligned = len(words) == len(out.txts)
    return [
        (
            np.asarray(box, dtype=float).tolist(),
            str(text),
            float(score),
            [(str(w), float(s), np.asarray(b, dtype=float).tolist()) for w, s, b in words[i]]
            if aligned
            else [],
        )
        for i, (box, text, score) in enumerate(zip(out.boxes, out.txts, out.scores, strict=True))
    ]


def sample_crops(page: npt.NDArray[Any], lines: list[Line]) -> list[npt.NDArray[Any]]:
    """The page's longest wide lines, cropped upright: what the classifier votes on."""
    from rapidocr.utils.process_img import get_rotate_crop_image

    quads = [np.asarray(q, dtype=np.float32) for q, *_ in lines if _aspect(q) >= _SAMPLE_MIN_ASPECT]
    quads.sort(key=lambda q: -float(np.linalg.norm(q[1] - q[0])))
    return [get_rotate_crop_image(page, q) for q in quads[:_SAMPLE_LINES]]


def turned_by_vote(verdicts: list[tuple[str, float]]) -> bool:
    """Whether the classifier's confidence on the sampled lines says the page is turned over."""
    turned = sum(float(score) for label, score in verdicts if "180" in label)
    total = sum(float(score) for _, score in verdicts)
    return total > 0 and turned > _TURNED_SHARE * total


def boxed(gray: npt.NDArray[np.uint8], line: Line) -> Line:
    """The line with its words (the recogniser's, or split from the line) boxed to their ink."""
    quad, text, score, found = line
    pieces = found or line_words(quad, text, score)
    return quad, text, score, [(w, s, tighten(gray, q)) for w, s, q in pieces]


def _aspect(quad: list[list[float]]) -> float:
    q = np.asarray(quad, dtype=float)
    width = float(np.linalg.norm(q[1] - q[0]))
    height = float(np.linalg.norm(q[3] - q[0]))
    return width / max(height, 1.0)


def mean_score(lines: list[Line]) -> float:
    chars = sum(len(text) for _, text, _, _ in lines)
    return sum(score * len(text) for _, text, score, _ in lines) / chars if chars else 0.0


def turn_line(line: Line, width: int, height: int) -> Line:
    quad, text, score, words = line
    return (
        _turn_quad(quad, width, height),
        text,
        score,
        [(w, s, _turn_quad(q, width, height)) for w, s, q in words],
    )


def _turn_quad(quad: list[list[float]], width: int, height: int) -> list[list[float]]:
    """A quad read on the page turned 180 degrees, in the page's own pixels, top-left first."""
    turned = [[width - x, height - y] for x, y in quad]
    return turned[2:] + turned[:2]


def _load_cuda_libraries() -> None:
    """Load CUDA and cuDNN from torch or the ``nvidia-*`` wheels before the CUDA provider.

    ``onnxruntime-gpu`` dlopens its CUDA provider lazily, and that library needs
    libcudart, libcublas and libcudnn; on a host where they come as pip wheels
    (or with torch) rather than in the loader's path, the provider fails to load
    and onnxruntime silently falls back to the CPU. ``preload_dlls`` (onnxruntime
    1.21+) loads them from where pip put them; the CPU package lacks it.
    """
    import onnxruntime

    preload = getattr(onnxruntime, "preload_dlls", None)
    if preload is not None:
        preload()
