"""The OCR activity renders pages only in the sandboxed inspection child.

The worker's own renderers (``raster``) and text-layer reader are replaced by
stand-ins that fail the test if called (a stand-in to prove a negative, as the
docstrings say); the child is a separate process, so it renders for real. A
scanned PNG, a scanned-only PDF and a PDF mixing typeset and scanned pages are
all recognised, and the policy's pixel limit is enforced by the child.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

import activities.pages.raster as raster
import activities.pages.textlayer as textlayer
from activities.engines.base import OcrEngine
from activities.ocr import OcrActivities
from activities.scratch import StagingArea
from custody import ids
from custody.models import OcrInput, OcrResult
from custody.settings import Limits
from custody.stores.local import LocalStore
from tests.activities.pages.test_textlayer import _born_digital


def _in_process(*_: object, **__: object) -> None:
    raise AssertionError("a page was rendered inside the worker")


@pytest.fixture(autouse=True)
def _no_worker_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-ins: any in-process render fails the test (the child is another process)."""
    monkeypatch.setattr(raster, "iter_pages", _in_process)
    monkeypatch.setattr(raster, "render_pdf_page", _in_process)
    monkeypatch.setattr(textlayer, "page_layer", _in_process)


def _recognise(
    tmp: Path, engine: OcrEngine, doc: Path, media: str, pages: int, limits: Limits | None = None
) -> OcrResult:
    store = LocalStore(tmp / "objects")
    data = doc.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    store.put(ids.source_key(sha, None), data)
    ocr = OcrActivities(store, StagingArea(tmp / "staging"), engine, 150, limits=limits)
    inp = OcrInput(
        sha256=sha, tenant=None, source_key=ids.source_key(sha, None), media_type=media, pages=pages
    )
    result: OcrResult = ActivityEnvironment().run(ocr.recognise, inp)
    return result


def test_ocr_sandboxed_scanned_png_and_pdf_render_in_the_child(
    tmp_path: Path, corpus: Path, ocr_engine: OcrEngine
) -> None:
    """A scanned PNG and a scan wrapped in a PDF are recognised with no in-worker render."""
    png = corpus / "ocr_gt" / "funsd_82092117.png"
    assert _recognise(tmp_path / "png", ocr_engine, png, "image/png", 1).chars > 100
    pdf = tmp_path / "scan.pdf"
    Image.open(png).convert("L").save(pdf, resolution=150.0)
    result = _recognise(tmp_path / "pdf", ocr_engine, pdf, "application/pdf", 1)
    assert result.chars > 100 and result.text_layer_pages == []


def test_ocr_sandboxed_mixed_pdf_reads_layers_and_renders_scans_in_the_child(
    tmp_path: Path, ocr_engine: OcrEngine
) -> None:
    """Typeset pages come from the text layer; the scanned one is rendered by the child."""
    typeset = tmp_path / "typeset.pdf"
    _born_digital(typeset, ["Hello world"])
    scan = tmp_path / "scan.pdf"
    Image.fromarray(np.full((300, 400), 255, np.uint8)).save(scan)
    mixed = pdfium.PdfDocument.new()
    mixed.import_pages(pdfium.PdfDocument(typeset), [0])
    mixed.import_pages(pdfium.PdfDocument(scan), [0])
    mixed.import_pages(pdfium.PdfDocument(typeset), [0])
    mixed.save(str(tmp_path / "mixed.pdf"))
    result = _recognise(tmp_path, ocr_engine, tmp_path / "mixed.pdf", "application/pdf", 3)
    assert result.pages == 3 and result.text_layer_pages == [0, 2]


def test_ocr_sandboxed_child_enforces_the_pixel_limit(
    tmp_path: Path, corpus: Path, ocr_engine: OcrEngine
) -> None:
    """A page over the policy's pixel budget is refused by the renderer, never retried."""
    png = corpus / "ocr_gt" / "funsd_82092117.png"
    with pytest.raises(ApplicationError) as err:
        _recognise(tmp_path, ocr_engine, png, "image/png", 1, Limits(max_page_pixels=1000))
    assert err.value.type == "PIXEL_LIMIT" and err.value.non_retryable
