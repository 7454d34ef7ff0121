"""PP-OCRv6 (RapidOCR on onnxruntime) behind the ``OcrEngine`` protocol.

The models ship inside the ``rapidocr`` wheel and are named by explicit path,
so nothing is ever downloaded; their sha256 must match ``MODELS``
(``activities.engines.rapid_models``, with their licence), the files reviewed
for this release, or the engine refuses to start. Each lane has
its own helper process (``activities.engines.rapid_server``) with the models
loaded once and one onnxruntime thread on the lane's core; the detector's
resolution is chosen per page; a page past its deadline is cancelled by
killing its helper. ``device`` is ``cuda`` when onnxruntime offers its CUDA
provider (``onnxruntime-gpu``) and the settings allow it, chosen when the
engine is built and recorded in every result. Measurements: docs/ocr-benchmark.md.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Literal

from activities.engines.base import (
    ParamValue,
    _as_gray_u8,
    _sha256_file,
    page_text,
)
from activities.engines.combs import read_combs
from activities.engines.rapid_models import MODEL_LICENCE, MODELS, cuda_available, model_dir
from activities.engines.rapid_server import RapidHelper
from activities.engines.rapid_wire import LIMIT_MAX, LIMIT_MIN, Line
from activities.pages.raster import GrayPage
from custody.errors import ConfigurationError
from custody.models import PageText, Word

Device = Literal["cpu", "cuda"]
_CUDNN_SEARCH = "HEURISTIC"  # see RapidOcrEngine._cuda_config


@dataclass(frozen=True)
class RapidTuning:
    """What shapes the output; the defaults are the measured winners (module docstring)."""

    det_max_side: int = 960  # pages longer than this are detected at this long side ...
    det_min_side: int = 736  # ... and pages shorter than this detected at this short side
    # Line crops per recogniser call. One: a batch is padded to its widest line,
    # and a line's reading then depends on its neighbours; alone it does not,
    # and (with the floor below) a page read 32 % faster at equal word F1.
    rec_batch_num: int = 1
    # The recogniser's input width floor, px at 48 px high. RapidOCR pads every
    # line to at least 320 (a 6.7:1 line); most form lines are shorter.
    rec_min_width: int = 48
    text_score: float = 0.5  # lines the recogniser scores lower are dropped
    box_thresh: float = 0.5  # detector: lowest mean score of a text box
    unclip_ratio: float = 1.6  # detector: how far a box grows around its text
    word_boxes: bool = True  # word boxes from the recogniser's character positions
    orientation: bool = True  # turn a page the classifier finds upside down
    combs: bool = True  # read comb rows (a character a box) as words: activities.engines.combs
    timeout_s: float = 300.0  # one page; past it the helper is killed


# See RapidOcrEngine.__init__.
_CUDA_TUNING = RapidTuning(rec_batch_num=6, rec_min_width=320)

# What a result recorded before a tuning field existed ran with: rebuilding an
# old result's engine (``build_recorded``) must read as it did.
RAPID_TUNING_BEFORE_RECORDED: dict[str, ParamValue] = {"rec_min_width": 320, "combs": False}


class RapidOcrEngine:
    """PP-OCRv6 in one helper process per lane; settings, models and device recorded per result."""

    name = "rapidocr"

    def __init__(self, threads: int, *, device: str = "auto", **tuning: Any) -> None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.threads = threads
        self.device: Device = _device(device)
        # On CUDA, lines stay batched as measured on the H200 (one kernel launch per
        # batch, not per line); the one-line batches were measured on CPU only.
        defaults = _CUDA_TUNING if self.device == "cuda" else RapidTuning()
        self.tuning = dataclasses.replace(defaults, **tuning)
        self._models = model_dir()
        self.version = f"rapidocr{version('rapidocr')}+onnxruntime{_ort_version()}"
        self._idle: list[RapidHelper] = []
        self._made: list[RapidHelper] = []
        self._lock = threading.Lock()
        self._cpus: tuple[int, ...] = ()

    def warm_up(self) -> None:
        """Check the model files and start one helper now, so a bad install fails at start."""
        self.model_hashes()
        with self._helper() as helper:
            providers = helper.start().get("providers", [])
        if self.device == "cuda" and "CUDAExecutionProvider" not in providers:
            raise ConfigurationError(detail="CUDA was chosen but onnxruntime fell back to the CPU")

    def params(self) -> dict[str, ParamValue]:
        settings: dict[str, ParamValue] = dataclasses.asdict(self.tuning)
        settings.update(
            detector=MODELS["det"][0],
            recogniser=MODELS["rec"][0],
            classifier=MODELS["cls"][0],
            model_licence=MODEL_LICENCE,
            device=self.device,
            intra_op_threads=self.threads,
            runtime="onnxruntime",
        )
        if self.device == "cuda":
            settings["cudnn_conv_algo_search"] = _CUDNN_SEARCH
        return settings

    def model_hashes(self) -> dict[str, str]:
        hashes: dict[str, str] = {}
        for file, reviewed in MODELS.values():
            path = self._models / file
            if not path.is_file():
                raise ConfigurationError(detail=f"rapidocr model {file} is missing")
            hashes[file] = _sha256_file(str(path))
            if reviewed and hashes[file] != reviewed:
                raise ConfigurationError(
                    detail=f"rapidocr model {file} is not the reviewed one: review its "
                    "licence, then record its sha256 in activities.engines.rapid.MODELS"
                )
        return hashes

    def recognise(self, image: GrayPage, page: int) -> PageText:
        started = time.perf_counter()
        gray = _as_gray_u8(image)
        height, width = gray.shape
        lines, flipped = self._read(gray, *self.detector_side(width, height))
        words = [w for line in lines for w in _words(line, width, height)]
        if self.tuning.combs and not flipped:
            words = read_combs(gray, words, self._strip_words)
        # Boxes stay in the page's pixels; the text follows the page as it reads.
        upright = [_turned(w, width, height) for w in words] if flipped else words
        return page_text(page, (width, height), words, started, upright)

    def _strip_words(self, strip: GrayPage) -> list[Word]:
        """The words of a strip cut from a page (a comb row); none if read turned over."""
        height, width = strip.shape
        lines, flipped = self._read(strip, *self.detector_side(width, height))
        return [] if flipped else [w for line in lines for w in _words(line, width, height)]

    def detector_side(self, width: int, height: int) -> tuple[int, int]:
        """The detector's resolution for this page: long side capped, short side raised."""
        t = self.tuning
        if max(width, height) > t.det_max_side:
            return t.det_max_side, LIMIT_MAX
        return t.det_min_side, LIMIT_MIN

    def _read(self, gray: GrayPage, side: int, limit: int) -> tuple[list[Line], bool]:
        """The page's lines and whether it was read turned over: by a lane's own helper."""
        with self._helper() as helper:
            return helper.read(gray, self.tuning.timeout_s, side, limit)

    def pin(self, cpus: tuple[int, ...]) -> None:
        """Run the helpers on these cores, helper i on ``cpus[i % len]`` (custody.cpus)."""
        with self._lock:
            self._cpus = cpus
            for n, helper in enumerate(self._made):
                helper.pin(self._cpu(n))

    def close(self) -> None:
        """Stop every helper (tests and the benchmark; a worker's exit closes their pipes)."""
        with self._lock:
            for helper in self._made:
                helper.close()

    def _cpu(self, n: int) -> int | None:
        return self._cpus[n % len(self._cpus)] if self._cpus else None

    @contextmanager
    def _helper(self) -> Iterator[RapidHelper]:
        """An idle helper, or a new one: as many as pages are recognised at once."""
        with self._lock:
            helper = self._idle.pop() if self._idle else None
            if helper is None:
                helper = RapidHelper(self._config(), orientation=self.tuning.orientation)
                helper.pin(self._cpu(len(self._made)))
                self._made.append(helper)
        try:
            yield helper
        finally:
            with self._lock:
                self._idle.append(helper)  # a killed one restarts on its next page

    def _config(self) -> dict[str, Any]:
        """RapidOCR's dotted parameters; every model by path, so nothing is downloaded."""
        t, ort = self.tuning, "EngineConfig.onnxruntime"
        paths = {
            f"{k.capitalize()}.model_path": str(self._models / f) for k, (f, _) in MODELS.items()
        }
        config = paths | {
            "Global.log_level": "error",
            "Global.use_cls": False,  # per page instead (activities.engines.rapid_reader)
            "Global.text_score": t.text_score,
            "Global.return_word_box": t.word_boxes,
            "Det.box_thresh": t.box_thresh,
            "Det.unclip_ratio": t.unclip_ratio,
            "Rec.rec_batch_num": t.rec_batch_num,
            "Rec.rec_img_shape": [3, 48, t.rec_min_width],
            f"{ort}.intra_op_num_threads": self.threads,
            f"{ort}.inter_op_num_threads": 1,
            f"{ort}.use_cuda": self.device == "cuda",
        }
        return config | self._cuda_config() if self.device == "cuda" else config

    @staticmethod
    def _cuda_config() -> dict[str, Any]:
        """cuDNN picks convolution algorithms by heuristic, not by timing every new shape.

        RapidOCR's default (``EXHAUSTIVE``) benchmarks every algorithm for each
        input shape it has not seen; line batches and pages come in ever new
        shapes, so on an H200 a page took 12.7 s, slower than one CPU core
        (docs/ocr-benchmark.md, GPU section).
        """
        return {"EngineConfig.onnxruntime.cuda_ep_cfg.cudnn_conv_algo_search": _CUDNN_SEARCH}


def _device(choice: str) -> Device:
    if choice == "cpu":
        return "cpu"
    if choice == "cuda" and not cuda_available():
        raise ConfigurationError(detail="CUSTODY_OCR_DEVICE=cuda but onnxruntime has no CUDA here")
    return "cuda" if choice == "cuda" or cuda_available() else "cpu"


def _ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)


def _words(line: Line, width: int, height: int) -> list[Word]:
    """The line's words as the helper boxed them (``rapid_reader.boxed``), kept on the page."""
    _, _, _, found = line
    return [
        Word(text=w.strip(), confidence=min(max(s, 0.0), 1.0), box=_clipped(q, width, height))
        for w, s, q in found
        if w.strip()
    ]


def _turned(word: Word, width: int, height: int) -> Word:
    box = [[width - x, height - y] for x, y in word.box]
    return word.model_copy(update={"box": box[2:] + box[:2]})


def _clipped(quad: list[list[float]], width: int, height: int) -> list[list[int]]:
    return [[min(max(round(x), 0), width), min(max(round(y), 0), height)] for x, y in quad]
