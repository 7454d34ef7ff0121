"""OCR engines behind one interface (PP-OCRv6, Tesseract, EasyOCR), lanes, selection.

Heavy libraries (onnxruntime, torch, cv2) load only when a module is imported:
this face names the modules and imports none of them.

base          The OCR engine behind the OCR activity: a small protocol and its EasyOCR
              implementation.
batched       PP-OCRv6 in batches across pages and lines, for a GPU OCR worker (issue #32).
lane_helper   A helper process per engine lane: the worker's side of the pipe, and its framing.
lanes         Engine lanes: the OCR worker holds more documents than it recognises at once.
rapid         PP-OCRv6 (RapidOCR on onnxruntime) behind the ``OcrEngine`` protocol.
rapid_models  The PP-OCRv6 model files Custody runs, reviewed: names, sha256 and licence.
rapid_reader  Inside the PP-OCRv6 helper (``activities.engines.rapid_server``): RapidOCR loaded
              once.
rapid_server  PP-OCRv6 kept loaded: a helper process per engine lane, fed one page after another.
rapid_wire    What the rapidocr lane helper and its reader share: the detection-limit modes and a
              line.
rapid_words   Words from a PP-OCR text line, when the recogniser gave no word boxes of its own.
selection     Build the OCR engine the settings name, exactly as the OCR worker and the benchmark
              use it.
tess_server   Tesseract kept loaded: a helper process per engine lane, fed one page after another.
tesseract     Tesseract behind the ``OcrEngine`` protocol, optionally refined by EasyOCR's
              recogniser.
"""

__all__ = [
    "base",
    "batched",
    "lane_helper",
    "lanes",
    "rapid",
    "rapid_models",
    "rapid_reader",
    "rapid_server",
    "rapid_wire",
    "rapid_words",
    "selection",
    "tess_server",
    "tesseract",
]
