"""The PP-OCRv6 model files Custody runs, reviewed: names, sha256 and licence.

Kept beside the engine (``activities.engines.rapid``) so a model change is a
reviewed change of this file. ``rapidocr`` 3.10 ships them in its wheel
(``rapidocr/models/``); the engine loads them from there by path and refuses
a file whose sha256 differs from the one recorded here.
"""

from __future__ import annotations

from pathlib import Path

from custody.errors import ConfigurationError

# The reviewed model files of rapidocr 3.10 (rapidocr/models/). PaddleOCR
# publishes PP-OCR models under Apache-2.0; RapidOCR's wheel repackages them
# as ONNX, which has been questioned upstream (RapidOCR issue 739), so the
# licence is recorded with every result and a changed file is refused.
MODELS = {
    "det": (
        "PP-OCRv6_det_small.onnx",
        "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f",
    ),
    "rec": (
        "PP-OCRv6_rec_small.onnx",
        "6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884",
    ),
    "cls": (
        "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
        "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
    ),
}
MODEL_LICENCE = "Apache-2.0 (PaddleOCR PP-OCRv6/v2 cls, ONNX via rapidocr; RapidOCR issue 739)"


def model_dir() -> Path:
    """Where the wheel keeps its models, found without importing rapidocr (cv2 and all)."""
    from importlib.util import find_spec

    spec = find_spec("rapidocr")
    if spec is None or spec.origin is None:
        raise ConfigurationError(
            detail="rapidocr is not installed: pip install rapidocr onnxruntime"
        )
    return Path(spec.origin).parent / "models"


def cuda_available() -> bool:
    """Whether onnxruntime here offers its CUDA provider (``onnxruntime-gpu`` on a GPU host)."""
    import onnxruntime

    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()
