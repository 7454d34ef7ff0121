"""Build the OCR engine the settings name, exactly as the OCR worker and the benchmark use it.

``CUSTODY_OCR_ENGINE`` picks it: ``tesseract`` (the default: Tesseract on
resolution-normalised pages, measured 18.4x bare EasyOCR's speed and more
accurate than bare Tesseract), ``hybrid`` (the same, with EasyOCR's recogniser
re-reading the words Tesseract is unsure of: +0.005 word F1, within one page's
noise, for 1.7-2.6x the time and 100 MB of weights) or ``easyocr`` (CRAFT
detection and EasyOCR recognition, the engine before issue #6). Figures:
docs/ocr-benchmark.md. The engine's
name, version, parameters and model hashes go into every result, so a change
of engine shows in the signed record; ``build_recorded`` rebuilds one from
such a record (a pinned, known-good configuration).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from activities.engines.base import EasyOcrEngine, EasyOcrTuning, OcrEngine, ParamValue
from activities.engines.tesseract import TesseractEngine, TesseractTuning
from custody.cpus import CpuPlan
from custody.errors import ConfigurationError
from custody.ocr_config import ConfigRegistry, OcrConfig
from custody.settings import Settings

#: Tesseract confidence under which ``hybrid`` lets EasyOCR re-read a word, and
#: EasyOCR's confidence needed to take its reading (the best pair measured).
HYBRID_REFINE_BELOW = 0.70
HYBRID_REFINE_ACCEPT = 0.70

Engine = EasyOcrEngine | TesseractEngine


def build_engine(settings: Settings, *, warm: bool = True) -> OcrEngine:
    """The configured engine; ``warm`` loads models and hashes them now, to fail at start."""
    threads = settings.effective_torch_threads()
    engine: Engine
    if settings.ocr_engine == "easyocr":
        engine = EasyOcrEngine(torch_threads=threads)
    elif settings.ocr_engine == "hybrid":
        engine = TesseractEngine(
            threads, refine_below=HYBRID_REFINE_BELOW, refine_accept=HYBRID_REFINE_ACCEPT
        )
    else:
        engine = TesseractEngine(threads)
    if warm:
        engine.warm_up()
    return engine


def build_recorded(
    name: str, params: Mapping[str, ParamValue], torch_threads: int, *, warm: bool = True
) -> OcrEngine:
    """The engine a result recorded (its ``engine`` name and ``params``), tuned as it was.

    Only tuning keys are taken from ``params``; the rest (device, languages,
    thread counts) describe the host or are fixed by the engine.
    """
    engine: Engine
    if name == "easyocr":
        engine = EasyOcrEngine(torch_threads, **_tuning(EasyOcrTuning, params))
    elif name in ("tesseract", "tesseract+easyocr"):
        engine = TesseractEngine(torch_threads, **_tuning(TesseractTuning, params))
    else:
        raise ValueError(f"unknown OCR engine {name!r}")
    if warm:
        engine.warm_up()
    return engine


def give_cores(engine: OcrEngine, plan: CpuPlan) -> bool:
    """Pin the engine's Tesseract helpers to the plan's cores (``custody.cpus``).

    False when the engine runs EasyOCR inside this process: its threads need
    the cores the plan would take from them.
    """
    if not isinstance(engine, TesseractEngine) or engine.name != "tesseract":
        return False
    engine.pin(plan.engine)
    return True


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
        engine = build_recorded(pinned.engine, pinned.params, settings.effective_torch_threads())
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
