"""Benchmarks behind ``custody bench KIND``: each kind's ``run(args, settings) -> int``."""

#: What ``custody bench ocr`` can time side by side (``--engines``).
ENGINES = ("easyocr_default", "rapidocr_default", "tesseract", "custody", "pipeline")
#: Degraded classes ``custody bench ocr`` can generate (``--degradations``;
#: ``starter.bench.degrade.KINDS`` names the same, kept here so the CLI stays light).
DEGRADATIONS = ("skew", "low_contrast", "jpeg", "fax", "stamp", "handwriting")
