"""Benchmarks behind ``custody bench KIND``: each kind's ``run(args, settings) -> int``."""

#: What ``custody bench ocr`` can time side by side (``--engines``).
ENGINES = ("easyocr_default", "tesseract", "custody", "pipeline")
