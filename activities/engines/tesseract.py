"""Tesseract behind the ``OcrEngine`` protocol, optionally refined by EasyOCR's recogniser.

Tesseract (Debian's ``tesseract-ocr`` 5.3, LSTM, ``eng``) finds the layout
and reads the words, through libtesseract kept loaded in a helper process per
lane (``activities.engines.tess_server``); pages shorter than ``upscale_below_px`` (the ~100-dpi
FUNSD forms) are first upscaled so that their text reaches the x-height
Tesseract's LSTM reads best. With ``refine_below`` > 0, words Tesseract is
unsure of are re-read by EasyOCR's recogniser alone on Tesseract's word box
(no CRAFT detection), and its reading replaces Tesseract's when it is sure.
The measurements behind the defaults are in docs/ocr-benchmark.md.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from activities.engines.base import (
    EasyOcrEngine,
    ParamValue,
    _as_gray_u8,
    _sha256_file,
    page_text,
)
from activities.engines.tess_server import TesseractHelper
from activities.pages.raster import GrayPage
from custody.models import PageText, Word

_LANGUAGE = "eng"
_RECOGNISER_FILE = "english_g2.pth"
_TESSDATA = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class TesseractTuning:
    """What shapes Tesseract's output and its refinement; defaults are the measured winners."""

    psm: int = 3  # automatic page segmentation: keeps Tesseract's reading order
    oem: int = 3  # the default engine mode, i.e. LSTM with this traineddata
    upscale_below_px: int = 1400  # pages shorter than this are upscaled ...
    upscale: int = 2  # ... by this factor (Lanczos)
    refine_below: float = 0.0  # Tesseract confidence (0-1) under which EasyOCR re-reads
    refine_accept: float = 0.7  # EasyOCR confidence needed to replace the word
    box_margin: float = 0.15  # of the word height, around each crop EasyOCR reads
    timeout_s: float = 300.0  # one page; a hung Tesseract must not hang the worker


@dataclass(frozen=True)
class _TessWord:
    line: tuple[int, int, int]  # block, paragraph, line (the text follows activities.pages.layout)
    text: str
    confidence: float
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in page pixels


@functools.cache
def tesseract_info() -> tuple[str, Path]:
    """The binary's version line and its tessdata directory, asked once per process."""
    version = _run_tesseract(["--version"], b"", 30.0).splitlines()[0].split()[-1]
    listing = _run_tesseract(["--list-langs"], b"", 30.0)
    found = _TESSDATA.search(listing)
    if found is None or _LANGUAGE not in listing.split():
        raise RuntimeError("tesseract has no 'eng' traineddata (install tesseract-ocr-eng)")
    return version, Path(found.group(1))


def _run_tesseract(args: list[str], stdin: bytes, timeout_s: float) -> str:
    # One OpenMP thread: the worker already runs one page per core, and
    # Tesseract's own threads would only oversubscribe the CPU.
    env = os.environ | {"OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            ["tesseract", *args],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise RuntimeError(
            "tesseract not found: `make system-deps` (apt-get install tesseract-ocr),"
            " or CUSTODY_OCR_ENGINE=easyocr"
        ) from None
    if done.returncode != 0:
        # stderr names only the binary's own complaint, never page text.
        raise RuntimeError(f"tesseract exited {done.returncode}: {done.stderr[-300:]!r}")
    return (done.stdout or done.stderr).decode("utf-8", errors="replace")


class TesseractEngine:
    """Tesseract on a resolution-normalised page, refined by EasyOCR when ``refine_below`` > 0."""

    def __init__(self, torch_threads: int, *, model_dir: str | None = None, **tuning: Any) -> None:
        self.tuning = dataclasses.replace(TesseractTuning(), **tuning)
        version, self._tessdata = tesseract_info()
        self._easy: EasyOcrEngine | None = None
        self._helpers: list[TesseractHelper] = []  # idle ones; one per lane in use at most
        self._helpers_made: list[TesseractHelper] = []
        self._helpers_lock = threading.Lock()
        self._cpus: tuple[int, ...] = ()
        self.name = "tesseract"
        self.version = f"tesseract{version}"
        if self.tuning.refine_below > 0:
            self._easy = EasyOcrEngine(torch_threads, model_dir=model_dir)
            self.name = "tesseract+easyocr"
            self.version += f"+easyocr{self._easy.version}"

    def warm_up(self) -> None:
        """Load the recogniser and hash the models now, so a bad install fails at start."""
        if self._easy is not None:
            self._easy.reader()
        with self._helper() as helper:
            helper.start()
        self.model_hashes()

    def params(self) -> dict[str, ParamValue]:
        settings: dict[str, ParamValue] = dataclasses.asdict(self.tuning)
        settings.update(languages=_LANGUAGE, omp_threads=1, runtime="libtesseract")
        if self._easy is not None:
            easy = self._easy.params()
            settings.update(recogniser=easy["recogniser"], torch_threads=easy["torch_threads"])
            settings.update(quantize=easy["quantize"], device=easy["device"])
        return settings

    def model_hashes(self) -> dict[str, str]:
        name = f"{_LANGUAGE}.traineddata"
        hashes = {name: _sha256_file(str(self._tessdata / name))}
        if self._easy is not None:
            hashes[_RECOGNISER_FILE] = self._easy.model_hashes()[_RECOGNISER_FILE]
        return hashes

    def recognise(self, image: GrayPage, page: int) -> PageText:
        started = time.perf_counter()
        gray = _as_gray_u8(image)
        height, width = gray.shape
        found = self._tesseract(gray)
        if self._easy is not None:
            found = self._refine(gray, found)
        page_words = [
            Word(text=w.text, confidence=w.confidence, box=_corners(w.box)) for w in found
        ]
        return page_text(page, (width, height), page_words, started)

    def _tesseract(self, gray: GrayPage) -> list[_TessWord]:
        t = self.tuning
        height, width = gray.shape
        scale = t.upscale if height < t.upscale_below_px else 1
        with self._helper() as helper:
            return _parse_tsv(helper.tsv(gray, t.timeout_s, scale), scale, width, height)

    def pin(self, cpus: tuple[int, ...]) -> None:
        """Run Tesseract's helpers on these cores, helper i on ``cpus[i % len]`` (custody.cpus)."""
        with self._helpers_lock:
            self._cpus = cpus
            for n, helper in enumerate(self._helpers_made):
                helper.pin(self._cpu(n))

    def _cpu(self, n: int) -> int | None:
        return self._cpus[n % len(self._cpus)] if self._cpus else None

    @contextmanager
    def _helper(self) -> Iterator[TesseractHelper]:
        """An idle helper, or a new one: as many as pages are recognised at once."""
        with self._helpers_lock:
            helper = self._helpers.pop() if self._helpers else None
            if helper is None:
                t = self.tuning
                helper = TesseractHelper(str(self._tessdata), _LANGUAGE, t.oem, t.psm)
                helper.pin(self._cpu(len(self._helpers_made)))
                self._helpers_made.append(helper)
        try:
            yield helper
        finally:
            with self._helpers_lock:
                self._helpers.append(helper)  # a failed one restarts on its next page

    def _refine(self, gray: GrayPage, found: list[_TessWord]) -> list[_TessWord]:
        assert self._easy is not None
        t = self.tuning
        height, width = gray.shape
        unsure = [i for i, w in enumerate(found) if w.confidence < t.refine_below]
        if not unsure:
            return found
        boxes = [_with_margin(found[i].box, t.box_margin, width, height) for i in unsure]
        # Recognition only, box by box, in the order given (EasyOCR 1.7.2 on CPU).
        read = self._easy.reader().recognize(
            gray, horizontal_list=boxes, free_list=[], detail=1, batch_size=1, decoder="greedy"
        )
        refined = list(found)
        for i, (_, text, confidence) in zip(unsure, read, strict=True):
            text, confidence = str(text).strip(), float(confidence)
            if text and confidence >= t.refine_accept:
                refined[i] = dataclasses.replace(found[i], text=text, confidence=confidence)
        return refined


def _parse_tsv(tsv: str, scale: int, width: int, height: int) -> list[_TessWord]:
    """Word rows (level 5) of Tesseract's TSV, boxes mapped back to page pixels."""
    words: list[_TessWord] = []
    for row in tsv.splitlines():
        cells = row.split("\t")
        if len(cells) != 12 or cells[0] != "5" or not cells[11].strip():
            continue
        block, par, line = int(cells[2]), int(cells[3]), int(cells[4])
        left, top, w, h = (int(c) for c in cells[6:10])
        x0, y0 = left // scale, top // scale
        x1 = min(-(-(left + w) // scale), width)
        y1 = min(-(-(top + h) // scale), height)
        confidence = min(max(float(cells[10]) / 100.0, 0.0), 1.0)
        words.append(_TessWord((block, par, line), cells[11].strip(), confidence, (x0, y0, x1, y1)))
    return words


def _corners(box: tuple[int, int, int, int]) -> list[list[int]]:
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _with_margin(
    box: tuple[int, int, int, int], margin: float, width: int, height: int
) -> list[int]:
    """EasyOCR's ``[x_min, x_max, y_min, y_max]``, padded: Tesseract's boxes are tight."""
    x0, y0, x1, y1 = box
    pad = round(margin * (y1 - y0))
    return [max(0, x0 - pad), min(width, x1 + pad), max(0, y0 - pad), min(height, y1 + pad)]
