"""Build the OCR engine the settings name, exactly as the OCR worker and the benchmark use it.

``CUSTODY_OCR_ENGINE`` picks it: ``rapidocr`` (the default: PP-OCRv6 on
onnxruntime, one helper per lane, measured the most accurate by far on the
corpus, several times Tesseract's CPU per page), ``tesseract`` (the light option:
Tesseract on resolution-normalised pages, no model weights beyond its
traineddata), ``hybrid`` (Tesseract with EasyOCR's recogniser re-reading the
words it is unsure of) or ``easyocr`` (CRAFT detection and EasyOCR
recognition, the engine the design names). Figures: docs/ocr-benchmark.md.
``CUSTODY_OCR_DEVICE`` (auto, cpu, cuda) puts rapidocr and easyocr on a GPU
when one is offered; the device is recorded in every result. The engine's
name, version, parameters and model hashes go into every result, so a change
of engine shows in the signed record; ``build_recorded`` rebuilds one from
such a record (a pinned, known-good configuration).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from activities.engines.base import EasyOcrEngine, EasyOcrTuning, OcrEngine, ParamValue
from activities.engines.rapid import RAPID_TUNING_BEFORE_RECORDED, RapidOcrEngine, RapidTuning
from activities.engines.tesseract import TesseractEngine, TesseractTuning
from custody.cpus import CpuPlan
from custody.errors import ConfigurationError
from custody.settings import Settings
from custody.state.ocr_config import ConfigRegistry, OcrConfig

#: Tesseract confidence under which ``hybrid`` lets EasyOCR re-read a word, and
#: EasyOCR's confidence needed to take its reading (the best pair measured).
HYBRID_REFINE_BELOW = 0.70
HYBRID_REFINE_ACCEPT = 0.70

Engine = EasyOcrEngine | TesseractEngine | RapidOcrEngine


def build_engine(settings: Settings, *, warm: bool = True) -> OcrEngine:
    """The configured engine; ``warm`` loads models and hashes them now, to fail at start."""
    threads = settings.effective_torch_threads()
    engine: Engine
    if settings.ocr_engine == "rapidocr":
        engine = _rapid(settings, _lane_threads(settings), _deadline(settings))
    elif settings.ocr_engine == "easyocr":
        engine = EasyOcrEngine(torch_threads=threads, device=settings.ocr_device)
    elif settings.ocr_engine == "hybrid":
        engine = TesseractEngine(
            threads, refine_below=HYBRID_REFINE_BELOW, refine_accept=HYBRID_REFINE_ACCEPT
        )
    else:
        engine = TesseractEngine(threads)
    if warm:
        engine.warm_up()
    return engine


#: The redaction check's second reader when the workers read with PP-OCR or EasyOCR:
#: Tesseract in sparse-text mode (psm 11), which looks for text anywhere on the page
#: without first finding its columns, so a line the workers' detector never boxed (a
#: dotted-leader "DOB" on a fax) is read. Measured: docs/ocr-benchmark.md ("A second reader").
CHECK_TESSERACT_PSM = 11


def build_checker(settings: Settings) -> OcrEngine:
    """The engine the redaction check reads each view with besides the workers' own: one
    of another family, whose misses differ (``activities.redact.check``)."""
    if settings.ocr_engine in ("tesseract", "hybrid"):
        return RapidOcrEngine(1, device=settings.ocr_device)
    try:
        return TesseractEngine(1, psm=CHECK_TESSERACT_PSM)
    except RuntimeError as err:  # no binary, or no 'eng' data: no view is made unchecked
        raise ConfigurationError(
            detail="the redaction check reads each view with Tesseract too, and it is not"
            " usable here: `make system-deps` (apt-get install tesseract-ocr)"
        ) from err


def build_recorded(
    name: str,
    params: Mapping[str, ParamValue],
    torch_threads: int,
    *,
    warm: bool = True,
    device: str = "auto",
    batched: Settings | None = None,
) -> OcrEngine:
    """The engine a result recorded (its ``engine`` name and ``params``), tuned as it was.

    Only tuning keys are taken from ``params``; the rest (device, languages,
    thread counts, batch settings) describe the host or are fixed by the engine.
    ``batched``: the settings of a batched worker, whose batches stay its own.
    """
    engine: Engine
    if name == "rapidocr":
        recorded = RAPID_TUNING_BEFORE_RECORDED | dict(params)
        tuning = _tuning(RapidTuning, recorded)
        if batched is not None:  # a batched worker reads the pinned tuning in batches
            engine = _rapid(batched, torch_threads, tuning)
        else:
            engine = RapidOcrEngine(torch_threads, device=device, **tuning)
    elif name == "easyocr":
        engine = EasyOcrEngine(torch_threads, device=device, **_tuning(EasyOcrTuning, params))
    elif name in ("tesseract", "tesseract+easyocr"):
        engine = TesseractEngine(torch_threads, **_tuning(TesseractTuning, params))
    else:
        raise ValueError(f"unknown OCR engine {name!r}")
    if warm:
        engine.warm_up()
    return engine


def give_cores(engine: OcrEngine, plan: CpuPlan) -> bool:
    """Pin the engine's helpers (Tesseract's or PP-OCR's) to the plan's cores (``custody.cpus``).

    False when the engine runs EasyOCR inside this process: its threads need
    the cores the plan would take from them.
    """
    if isinstance(engine, RapidOcrEngine) and engine.device == "cpu":
        engine.pin(plan.engine)
        return True
    if not isinstance(engine, TesseractEngine) or engine.name != "tesseract":
        return False
    engine.pin(plan.engine)
    return True


def _rapid(settings: Settings, threads: int, tuning: dict[str, Any]) -> RapidOcrEngine:
    """PP-OCRv6 in lanes, or batched across pages when ``CUSTODY_OCR_BATCH_PAGES`` is set."""
    if not settings.ocr_batch_pages:
        return RapidOcrEngine(threads, device=settings.ocr_device, **tuning)
    from activities.engines.batched.engine import BatchedRapidEngine
    from activities.engines.batched.tuning import BatchTuning

    plan = settings.cpu_plan()
    batch = BatchTuning(
        pages=settings.ocr_batch_pages,
        streams=settings.ocr_batch_streams or (len(plan.engine) if plan else 0),
        wait_ms=settings.ocr_batch_wait_ms,
        cuda_graphs=settings.ocr_cuda_graphs,
    )
    return BatchedRapidEngine(
        threads, device=settings.ocr_device, batch=batch, gpu=settings.ocr_gpu_provider, **tuning
    )


def _lane_threads(settings: Settings) -> int:
    """onnxruntime threads per helper: one when each lane has a core of its own, else a share."""
    return 1 if settings.cpu_plan() is not None else settings.effective_torch_threads()


def _deadline(settings: Settings) -> dict[str, Any]:
    # A page is cancelled (its helper killed) when its heartbeats stop (activities.ocr).
    return {"timeout_s": settings.ocr_page_deadline_s}


def _tuning(kind: type, params: Mapping[str, ParamValue]) -> dict[str, Any]:
    names = {field.name for field in dataclasses.fields(kind)}
    return {key: value for key, value in params.items() if key in names}


def configured_engine(settings: Settings, registry: ConfigRegistry, actor: str) -> OcrEngine:
    """The engine an OCR worker runs: a pinned configuration if an operator set one
    (``custody ocr config rollback|pin``), else the settings'; recorded in the history."""
    pinned = registry.pinned()
    if pinned is None:
        engine = build_engine(settings)
    else:
        rapid = pinned.engine == "rapidocr"
        threads = _lane_threads(settings) if rapid else settings.effective_torch_threads()
        batched = settings if settings.ocr_batch_pages else None
        engine = build_recorded(
            pinned.engine, pinned.params, threads, device=settings.ocr_device, batched=batched
        )
        installed = engine.model_hashes()
        if installed != pinned.model_hashes:
            # Same parameters over other model files would not be the known-good one.
            raise ConfigurationError(
                detail=f"pinned OCR configuration {pinned.digest} needs other model files "
                f"than are installed ({', '.join(sorted(installed))}): install them or unpin"
            )
    registry.observe(describe(engine), actor)
    return engine


def describe(engine: OcrEngine) -> OcrConfig:
    """What the signed records will say about this engine, as one configuration."""
    return OcrConfig(
        engine=engine.name,
        version=engine.version,
        params=engine.params(),
        model_hashes=engine.model_hashes(),
    )
