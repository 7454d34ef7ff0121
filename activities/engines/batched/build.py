"""Inside the batched helper: the reader built from RapidOCR's params and the batch options.

RapidOCR is constructed for its configuration and its per-page steps only;
its own sessions are never loaded. The three reviewed models (by the paths
in the params, so nothing is downloaded) and the CTC head get sessions of
our own (``sessions``), on the provider the options name. On CUDA every
planned detector bucket runs once before the helper answers its start, so a
shape's planning is paid at start-up, not by a document's page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.metadata import version
from types import SimpleNamespace
from typing import Any

import numpy as np

from activities.engines.batched import profiling
from activities.engines.batched.buckets import DetBuckets, powers_of_two
from activities.engines.batched.ctc_head import head_model
from activities.engines.batched.detect import Detector
from activities.engines.batched.reader import BatchReader
from activities.engines.batched.recognise import LineReader
from activities.engines.batched.sessions import Model, Runtime, check, open_session


@dataclass
class Built:
    """The helper's reader, its sessions (for the profile) and what it reports at start."""

    reader: BatchReader
    sessions: dict[str, Any]
    runtime: dict[str, Any]
    profiling: bool


def reader(config: dict[str, Any], options: dict[str, Any]) -> Built:
    """Everything the helper reads with; on CUDA, its detector buckets planned."""
    from rapidocr import RapidOCR

    started = time.perf_counter()
    runtime = _runtime(options)
    check(runtime)
    if runtime.device == "cuda":
        _load_cuda_libraries()
    ocr: Any = RapidOCR(params=config)  # untyped; builds no sessions until asked
    paths = {k: config[f"{k.capitalize()}.model_path"] for k in ("det", "rec", "cls")}
    graphs = runtime.cuda_graphs and runtime.device == "cuda"
    sessions = {
        k: open_session(p, k, runtime, graphs=graphs and k == "det") for k, p in paths.items()
    }
    if runtime.iobinding:
        sessions["head"] = open_session(head_model(), "head", runtime)
    models = {k: Model(s, runtime, graphs=graphs and k == "det") for k, s in sessions.items()}
    sizes = powers_of_two(options["pages"]) if runtime.device == "cuda" else None
    buckets = DetBuckets(options["det_px"], options["det_max_side"])
    detector = Detector(ocr, models["det"], buckets, sizes)
    floor = int(config["Rec.rec_img_shape"][2])
    lines = LineReader(
        models["rec"], models.get("head"), floor, options["line_px"], options["lines"]
    )
    built = BatchReader(
        ocr, detector, lines, _classifier(ocr, models["cls"]), options["orientation"]
    )
    plan = detector.plan() if runtime.device == "cuda" and options.get("plan", True) else {}
    info = {
        "rapidocr": version("rapidocr"),
        "onnxruntime": _ort_version(),
        "providers": models["det"].providers(),
        "plan_seconds": plan,
        "start_seconds": round(time.perf_counter() - started, 3),
    }
    return Built(built, sessions, info, runtime.profile_dir is not None)


def profile(built: Built) -> dict[str, Any]:
    """onnxruntime's profile summary per model, once (profiling then ends); else empty."""
    if not built.profiling:
        return {}
    built.profiling = False
    return profiling.end(built.sessions)


def _runtime(options: dict[str, Any]) -> Runtime:
    return Runtime(
        provider=options["provider"],
        threads=options["threads"],
        iobinding=options["iobinding"],
        cuda_graphs=options["cuda_graphs"],
        profile_dir=options.get("profile_dir"),
        trt_cache_dir=options.get("trt_cache_dir"),
    )


def _classifier(ocr: Any, model: Model) -> Any:
    """The angle classifier over a list of crops in one call: ``[(label, score)]``."""
    from rapidocr.ch_ppocr_cls.main import CLS_SHAPE_BY_OCR_VERSION, TextClassifier
    from rapidocr.ch_ppocr_cls.utils import ClsPostProcess

    cfg = ocr.cfg.Cls
    shape = SimpleNamespace(cls_image_shape=CLS_SHAPE_BY_OCR_VERSION[cfg.ocr_version])
    post = ClsPostProcess(list(cfg.label_list))
    resize: Any = TextClassifier.resize_norm_img  # needs only the shape from its instance

    def classify(crops: list[Any]) -> list[tuple[str, float]]:
        if not crops:
            return []
        # Each crop is padded to the classifier's fixed width alone: one call changes nothing.
        batch = np.concatenate([resize(shape, c)[None] for c in crops])
        return [(str(label), float(score)) for label, score in post(model.run(batch))]

    return classify


def _ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)


def _load_cuda_libraries() -> None:
    """CUDA and cuDNN from pip's ``nvidia-*`` wheels or torch, before the CUDA provider
    loads (``rapid_reader._load_cuda_libraries`` says why); absent on CPU packages."""
    import onnxruntime

    preload = getattr(onnxruntime, "preload_dlls", None)
    if preload is not None:
        preload()
