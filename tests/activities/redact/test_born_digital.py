"""A born-digital referral whose annotations and label image its text layer does not hold.

One page from ``starter.bench.born_digital`` (typeset Helvetica, a FreeText
annotation and a stamp with appearance streams, an image of a patient label),
read as the pipeline reads it: its text layer and its render, both from the
sandboxed child; the view made with the real OCR engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.engines.base import OcrEngine
from activities.inspect.sandboxed import iter_layers_sandboxed, iter_pages_sandboxed
from activities.redact.core import make_view
from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION
from custody.models import PageText
from starter.bench.born_digital import write_set

pytestmark = pytest.mark.slow
DPI = 200


def test_redaction_born_digital_paints_annotations_stamps_and_label_images(
    tmp_path: Path, ocr_engine: OcrEngine
) -> None:
    """Nothing of the patient readable in the view, though the text layer lacks half of it."""
    [path] = write_set(tmp_path, 1, "dev")
    truth = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())["fields"]
    pages: list[PageText] = []
    for index, layer, image in iter_layers_sandboxed(path, DPI):
        if layer is None:
            assert image is not None
            layer = ocr_engine.recognise(image, index)
        pages.append(layer)
    assert pages[0].words and "RECEIVED" not in pages[0].text  # the stamp is no text-layer word
    images = iter_pages_sandboxed(path, "application/pdf", DPI)
    made = make_view(images, pages, None, DEFAULT_REDACTION, ocr_engine, DPI)
    plan = make_plan(pages, None, DEFAULT_REDACTION)
    assert len(made.plan.regions) > len(plan.regions)  # the re-read painted what was drawn
    readable = normal(" ".join(made.surfaces.ocr + made.surfaces.layers))
    for value in truth.values():
        for part in (value, *value.replace(",", " ").split()):
            assert len(normal(part)) < 4 or normal(part) not in readable
    assert "referralletter" in readable and "palpitations" in readable
