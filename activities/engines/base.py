"""The OCR engine behind the OCR activity: a small protocol and its EasyOCR implementation.

The activity depends only on ``OcrEngine``. ``EasyOcrEngine`` was the only
engine before issue #6; the default is now ``activities.engines.tesseract.TesseractEngine``
(measured faster and more accurate, docs/ocr-benchmark.md), and
``activities.engines.selection.build_engine`` picks one from the settings.
torch and easyocr are imported inside functions, so importing this module (and
the activity) stays cheap until an engine is actually built.
"""

# Tuning, measured 2026-11-29 on the 2-core CPU dev box, torch threads = 2,
# pages from activities.pages.raster (PDF at 200 dpi). s/page is the best of 2
# interleaved runs; a concurrent test suite shared the CPU, so single runs
# varied up to 4x (the 38.5 s is such a run; identical work took 7.7-9.4 s
# in quieter runs). Word F1 is order-independent; CER uses page.text.
#
#   file (px)                      s/page bare -> tuned   word F1 bare -> tuned   CER
#   tess_phototest.tif  640x480        2.3 ->  2.2          1.000 -> 1.000        0.007 -> 0.007
#   funsd_82251504      754x1000       8.4 ->  7.8          0.455 -> 0.455        0.144 -> 0.144
#   funsd_82092117      754x1000      38.5 -> 10.8          0.468 -> 0.468        0.199 -> 0.194
#   sroie_145           920x1757      12.9 ->  6.9          0.713 -> 0.674        0.479 -> 0.465
#   2-page PDF p.1      1509x2000     22.7 ->  9.8          0.873 -> 0.881        0.063 -> 0.059
#
# Detection (CRAFT) is 50-95% of the time and scales with its input pixels, so
# canvas_size (the cap on the detector's longest side) is the lever: on the 9
# pages longer than 1280 px (7 SROIE receipts, both PDF pages) mean word F1 was
# 0.689 bare, 0.699 at 1600, 0.697 at 1280 (per page -0.04..+0.06), for 0.41x
# the detector pixels of a 200-dpi page. Pages up to 1280 px run exactly as bare.
# The page itself is never resized: recognition reads its crops from the full
# page and scales each to 64 px high, so its cost does not grow with resolution.
# Tried and rejected: mag_ratio 0.75 (30% faster, F1 -0.03..-0.07 on forms and
# receipts); mag_ratio 1.5 on ~100-dpi FUNSD (F1 +0..0.04, twice as slow);
# batch_size (no effect: EasyOCR 1.7.2 recognises box by box on CPU).
# Output is deterministic on CPU: the same page gave byte-identical text twice
# in one process and across processes (5 pages checked).

from __future__ import annotations

import dataclasses
import functools
import hashlib
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from activities.pages.layout import reading_text
from activities.pages.raster import GrayPage
from custody.extras import needs
from custody.models import PageText, Word

ParamValue = str | int | float | bool

_DETECTOR = "craft"
_DETECTOR_FILE = "craft_mlt_25k.pth"
_RECOGNISER = "english_g2"
_RECOGNISER_FILE = "english_g2.pth"
#: What needs ``custody[easyocr]``, as a missing extra's message names it.
_FEATURE = "the EasyOCR engine (CUSTODY_OCR_ENGINE=easyocr or hybrid)"


class OcrEngine(Protocol):
    """What the OCR activity needs from an engine; a test double is a few lines."""

    name: str
    version: str

    def params(self) -> dict[str, ParamValue]:
        """Every setting that shapes the output, recorded with each result."""
        ...

    def model_hashes(self) -> dict[str, str]:
        """sha256 of each model file the engine uses, keyed by file name."""
        ...

    def recognise(self, image: GrayPage, page: int) -> PageText:
        """Recognise one HxW uint8 page image; ``page`` is its 0-based index."""
        ...


@dataclass(frozen=True)
class EasyOcrTuning:
    """Keyword arguments to ``readtext``; the defaults are the measured ones above."""

    canvas_size: int = 1280
    mag_ratio: float = 1.0
    batch_size: int = 1
    paragraph: bool = False  # per-box words and confidences, not merged blocks
    decoder: str = "greedy"


@dataclass(frozen=True)
class _ReaderKey:
    """What makes two readers different; readtext settings do not."""

    languages: tuple[str, ...]
    model_dir: str
    quantize: bool
    gpu: bool = False


_READERS: dict[_ReaderKey, Any] = {}
# Held while a reader loads, so concurrent first calls wait for the one load
# instead of each reading ~100 MB of weights.
_READERS_LOCK = threading.Lock()


def shared_reader(key: _ReaderKey) -> Any:
    """The process's one ``easyocr.Reader`` for ``key``, loaded on first use."""
    with _READERS_LOCK:
        if key not in _READERS:
            _READERS[key] = _load_reader(key)
        return _READERS[key]


def _load_reader(key: _ReaderKey) -> Any:
    with needs("easyocr", _FEATURE):
        import easyocr

    # Every path is explicit and downloads are off, so a missing or altered
    # model fails loudly instead of fetching from the internet; the user
    # network directory would otherwise be created under ~/.EasyOCR.
    return easyocr.Reader(
        list(key.languages),
        gpu=key.gpu,
        model_storage_directory=key.model_dir,
        user_network_directory=key.model_dir,
        detect_network=_DETECTOR,
        recog_network=_RECOGNISER,
        download_enabled=False,
        quantize=key.quantize,
        verbose=False,
    )


@functools.cache
def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class EasyOcrEngine:
    """EasyOCR on CPU (or CUDA), one shared reader per process, settings recorded per result."""

    name = "easyocr"

    def __init__(
        self,
        torch_threads: int,
        *,
        model_dir: str | None = None,
        device: str = "cpu",
        **tuning: Any,
    ) -> None:
        with needs("easyocr", _FEATURE):
            import easyocr
            import easyocr_en_models
            import torch

        if torch_threads < 1:
            raise ValueError(f"torch_threads must be >= 1, got {torch_threads}")
        # Process-wide: the worker sizes it as cores / concurrent OCR activities,
        # because torch's default (all cores per call) oversubscribes the CPU
        # as soon as two pages are recognised at once.
        torch.set_num_threads(torch_threads)
        self.torch_threads = torch_threads
        self.tuning = dataclasses.replace(EasyOcrTuning(), **tuning)
        model_dir = model_dir or str(easyocr_en_models.model_dir())
        # CUDA when asked for ("cuda") or offered ("auto"), decided once, at worker start.
        gpu = device == "cuda" or (device == "auto" and bool(torch.cuda.is_available()))
        if gpu and not torch.cuda.is_available():
            raise ValueError("CUSTODY_OCR_DEVICE=cuda but torch sees no CUDA device")
        self._key = _ReaderKey(("en",), model_dir, quantize=not gpu, gpu=gpu)
        self.version = f"{easyocr.__version__}+torch{torch.__version__}"

    def reader(self) -> Any:
        """The process's shared ``easyocr.Reader``, loaded on first use."""
        return shared_reader(self._key)

    def warm_up(self) -> None:
        """Load the reader and hash the models now, so a bad install fails at start."""
        self.reader()
        self.model_hashes()

    def params(self) -> dict[str, ParamValue]:
        settings: dict[str, ParamValue] = dataclasses.asdict(self.tuning)
        settings.update(
            languages=",".join(self._key.languages),
            detector=_DETECTOR,
            recogniser=_RECOGNISER,
            quantize=self._key.quantize,
            device="cuda" if self._key.gpu else "cpu",
            torch_threads=self.torch_threads,
        )
        return settings

    def model_hashes(self) -> dict[str, str]:
        directory = Path(self._key.model_dir)
        return {
            name: _sha256_file(str(directory / name)) for name in (_DETECTOR_FILE, _RECOGNISER_FILE)
        }

    def recognise(self, image: GrayPage, page: int) -> PageText:
        started = time.perf_counter()
        gray = _as_gray_u8(image)
        height, width = gray.shape
        found = self.reader().readtext(gray, detail=1, **dataclasses.asdict(self.tuning))
        page_words = [_word(box, text, conf, width, height) for box, text, conf in found]
        return page_text(page, (width, height), [w for w in page_words if w.text], started)


def _as_gray_u8(image: GrayPage) -> GrayPage:
    # activities.pages.raster already yields uint8; this guards direct callers, since
    # EasyOCR crashes on boolean (1-bit) arrays.
    if image.ndim != 2:
        raise ValueError(f"expected an HxW grayscale page, got shape {image.shape}")
    if image.dtype == np.bool_:
        return np.where(image, 255, 0).astype(np.uint8)
    return np.ascontiguousarray(image, dtype=np.uint8)


def _word(box: Any, text: str, confidence: float, width: int, height: int) -> Word:
    # EasyOCR returns numpy floats, and rotated boxes may poke past the edge.
    points = [[_clip(x, width), _clip(y, height)] for x, y in box]
    return Word(text=text.strip(), confidence=min(max(float(confidence), 0.0), 1.0), box=points)


def _clip(value: Any, limit: int) -> int:
    return min(max(round(float(value)), 0), limit)


def mean_confidence(words: list[Word]) -> float:
    """Mean word confidence weighted by characters, so a stray '|' counts little."""
    chars = sum(len(w.text) for w in words)
    if chars == 0:
        return 0.0
    return sum(w.confidence * len(w.text) for w in words) / chars


def page_text(
    page: int,
    size: tuple[int, int],
    words: list[Word],
    started: float,
    upright: list[Word] | None = None,
) -> PageText:
    """An engine's answer for one page: its words in the page's pixels, its text read from
    ``upright`` (the words as the page reads, where the engine turned it) or the words."""
    return PageText(
        page=page,
        width=size[0],
        height=size[1],
        text=reading_order_text(words if upright is None else upright),
        words=words,
        mean_confidence=mean_confidence(words),
        seconds=round(time.perf_counter() - started, 3),
    )


def reading_order_text(words: list[Word]) -> str:
    """Lines in reading order, words left to right: the page's one layout model
    (``activities.pages.layout``), so published text, fields and redaction read one set of lines.
    """
    return reading_text(words)
