"""Born-digital PDFs skip OCR; everything else gets a searchable PDF beside its text.

Real pipeline throughout (dev server, the default Tesseract engine, local store). The engine is
wrapped only to count its calls.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
from pathlib import Path
from typing import Literal

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as raw
from PIL import Image
from temporalio.testing import ActivityEnvironment

from activities.engines.base import OcrEngine
from activities.ocr import OcrActivities
from activities.pages.raster import PDF
from activities.pages.searchable import searchable_pdf
from activities.pages.textlayer import ENGINE as TEXT_LAYER_ENGINE
from activities.scratch import StagingArea
from custody import ids
from custody.ledger.events import Ledger
from custody.ledger.signing import public_keys
from custody.models import DocState, OcrInput, OcrResult, PageText, Word
from custody.settings import Limits
from custody.stores.local import LocalStore
from starter.client.read import result
from starter.client.submit import submit, wait
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import verify_document
from tests.activities.pages.test_textlayer import _born_digital
from tests.helpers import CountingEngine, Rig

# Typeset words of no configured type: a discharge summary would wait for its fields.
LINES = ["Shipping notice for dock 7", "Collect within 2 weeks"]
DPI = 200


def _page_texts(pdf_bytes: bytes) -> list[str]:
    pdf = pdfium.PdfDocument(pdf_bytes)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def _mixed(path: Path, scan: Path) -> None:
    """Page 1 typeset, page 2 a scan with no text layer at all (an image-only page)."""
    typeset = path.with_suffix(".typeset.pdf")
    _born_digital(typeset, LINES)
    image = np.asarray(Image.open(scan).convert("L"), dtype=np.uint8)
    blank = PageText(page=0, width=1, height=1, text="", words=[], mean_confidence=0, seconds=0)
    scanned = pdfium.PdfDocument(searchable_pdf([(image, blank)], dpi=DPI))
    pdf = pdfium.PdfDocument(typeset)
    pdf.import_pages(scanned)
    pdf.save(str(path))
    pdf.close()
    scanned.close()


async def test_born_digital_pdf_is_published_from_its_text_layer_without_ocr(
    rig: Rig,
) -> None:
    """Exactly the typeset text, the engine never called, and the record says text-layer."""
    settings = rig.settings()
    engine = CountingEngine(rig.engine)
    letter = rig.home / "letter.pdf"
    _born_digital(letter, LINES)
    async with rig.pipeline(settings, engine) as custody:
        sub = await submit(custody, letter, tenant=rig.tenant)
        res = await wait(custody, sub.sha256, tenant=rig.tenant)
        assert res.state is DocState.PUBLISHED, (res.state, res.code)
        view = result(custody, sub.sha256, rig.tenant)
        anchors = TrustAnchors.from_settings(settings)
        keys = public_keys(custody.store)
        report = verify_document(custody.store, keys, sub.sha256, rig.tenant, anchors=anchors)
        events = Ledger(custody.store, rig.tenant).for_document(sub.sha256)
    assert res.state is DocState.PUBLISHED, res
    assert view.text == "\n".join(LINES)
    recognised = [e for e in events if e.kind == "recognised"]
    assert [e.detail["text_layer_pages"] for e in recognised] == [1]
    assert engine.calls == 0
    record = view.record
    assert record.engine == TEXT_LAYER_ENGINE and record.model_hashes == {}
    assert record.text_layer_pages == [0]
    assert record.text_layer_sha256 == [hashlib.sha256(view.text.encode()).hexdigest()]
    assert [p.source for p in view.pages] == ["text-layer"]
    # The original is searchable already: the record names it rather than a copy.
    assert record.searchable == "original" and record.pdf_key == record.source_key
    assert not [k for k in custody.store.list(f"results/{rig.tenant}/{sub.sha256}/") if ".pdf" in k]
    assert report.ok, report
    assert "pdf.checksum" in {c.name for c in report.checks}


async def test_scanned_page_gets_a_verified_searchable_pdf_beside_the_text(
    rig: Rig,
) -> None:
    """A typeset page and a scanned one: OCR runs once; the stored PDF finds both pages' words."""
    settings = rig.settings()
    engine = CountingEngine(rig.engine)
    mixed = rig.home / "mixed.pdf"
    _mixed(mixed, rig.corpus / "ocr_gt" / "tess_phototest.tif")
    async with rig.pipeline(settings, engine) as custody:
        sub = await submit(custody, mixed, tenant=rig.tenant)
        res = await wait(custody, sub.sha256, tenant=rig.tenant)
        view = result(custody, sub.sha256, rig.tenant)
        store = custody.store
        keys, anchors = public_keys(store), TrustAnchors.from_settings(settings)
        assert res.state is DocState.PUBLISHED, res
        record = view.record
        assert engine.calls == 1
        assert record.engine == rig.engine.name and record.text_layer_pages == [0]
        assert [p.source for p in view.pages] == ["text-layer", "ocr"]
        assert record.searchable == "built"
        assert record.pdf_key == ids.pdf_key(sub.sha256, rig.tenant, record.text_sha256)
        pdf = store.get(record.pdf_key)
        assert hashlib.sha256(pdf).hexdigest() == record.pdf_sha256
        typeset, scanned = _page_texts(pdf)
        assert " ".join(typeset.split()) == " ".join(" ".join(LINES).split())
        recognised = [t for w in view.pages[1].words for t in w.text.split()]
        assert len(recognised) >= 20  # the phototest page has about 90 words
        assert [t for t in recognised if t not in scanned] == []
        assert verify_document(store, keys, sub.sha256, rig.tenant, anchors=anchors).ok
        # Scratch copies are gone once the record exists; only the published PDF remains.
        assert not list(store.list(ids.work_prefix(sub.sha256, rig.tenant)))
        path = settings.objects_dir / record.pdf_key
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
        report = verify_document(store, keys, sub.sha256, rig.tenant, anchors=anchors)
    assert {c.name for c in report.checks if not c.ok} == {"pdf.checksum"}


def test_text_layer_policy_is_part_of_the_policy_fingerprint() -> None:
    """Switching the born-digital policy changes the policy_version every result records."""
    assert Limits().text_layer == "prefer"
    assert Limits(text_layer="ignore").policy_version() != Limits().policy_version()


def _invisible(path: Path, line: str) -> None:
    """A page that shows nothing but claims ``line`` in invisible text (render mode 3)."""
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(612, 792)
    obj = raw.FPDFPageObj_NewTextObj(pdf.raw, b"Helvetica", ctypes.c_float(12))
    encoded = (line + "\x00").encode("utf-16-le")
    raw.FPDFText_SetText(obj, ctypes.cast(ctypes.c_char_p(encoded), ctypes.POINTER(raw.FPDF_WCHAR)))
    raw.FPDFTextObj_SetTextRenderMode(obj, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
    raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 72, 700)
    raw.FPDFPage_InsertObject(page.raw, obj)
    page.gen_content()
    page.close()
    pdf.save(str(path))
    pdf.close()


def _run_ocr(
    tmp_path: Path,
    engine: OcrEngine,
    pdf: Path,
    policy: Literal["prefer", "ignore"],
    pages: int = 1,
    attempt: int = 1,
) -> OcrResult:
    """The OCR activity alone, as the worker runs it, under the given text-layer policy."""
    store = LocalStore(tmp_path / "objects")
    data = pdf.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if not store.exists(ids.source_key(sha, None)):
        store.put(ids.source_key(sha, None), data)
    ocr = OcrActivities(
        store,
        StagingArea(tmp_path / "staging"),
        engine,
        DPI,
        text_layer=policy,
    )
    inp = OcrInput(
        sha256=sha, tenant=None, source_key=ids.source_key(sha, None), media_type=PDF, pages=pages
    )
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=attempt)
    result: OcrResult = env.run(ocr.recognise, inp)
    return result


def test_ignore_policy_recognises_born_digital_pages_with_the_engine(
    tmp_path: Path, ocr_engine: OcrEngine
) -> None:
    """CUSTODY_LIMIT_TEXT_LAYER=ignore: the typeset page goes to the engine and gets a built PDF."""
    engine = CountingEngine(ocr_engine)
    letter = tmp_path / "letter.pdf"
    _born_digital(letter, LINES)
    result = _run_ocr(tmp_path, engine, letter, "ignore")
    assert engine.calls == 1
    assert result.engine == ocr_engine.name and result.text_layer_pages == []
    assert result.searchable == "built" and result.pdf_key is not None


def test_invisible_text_is_not_taken_as_the_page_text(
    tmp_path: Path, ocr_engine: OcrEngine
) -> None:
    """Words a page claims but does not show are no text layer: OCR reads the page as it looks."""
    engine = CountingEngine(ocr_engine)
    forged = tmp_path / "forged.pdf"
    _invisible(forged, "Pay to the order of Mallory")
    result = _run_ocr(tmp_path, engine, forged, "prefer")
    assert engine.calls == 1 and result.text_layer_pages == []
    assert result.chars == 0  # the page shows nothing, so nothing is recognised


def test_resumed_attempt_builds_the_pdf_from_stored_and_new_pages(
    tmp_path: Path, corpus: Path, ocr_engine: OcrEngine
) -> None:
    """Page one comes from the store (an earlier attempt's), page two from OCR; the PDF has both.

    The earlier attempt's page is written by the test, as a killed attempt would
    have left it, with a word the document does not contain, so the PDF shows
    which source each page's text layer came from.
    """
    engine = CountingEngine(ocr_engine)
    mixed = tmp_path / "mixed.pdf"
    _mixed(mixed, corpus / "ocr_gt" / "tess_phototest.tif")
    sha = hashlib.sha256(mixed.read_bytes()).hexdigest()
    store = LocalStore(tmp_path / "objects")
    store.put(ids.source_key(sha, None), mixed.read_bytes())
    box = [[200, 200], [600, 200], [600, 260], [200, 260]]
    earlier = PageText(
        page=0,
        width=1700,
        height=2200,
        text="Stored",
        words=[Word(text="Stored", confidence=1.0, box=box)],
        mean_confidence=1.0,
        seconds=0.0,
        source="text-layer",
    )
    run = (ActivityEnvironment().info.workflow_run_id or "run")[:8]
    store.put(ids.work_page_key(sha, None, f"{run}-a1", 0), earlier.model_dump_json().encode())
    result = _run_ocr(tmp_path, engine, mixed, "prefer", pages=2, attempt=2)
    assert engine.calls == 1 and result.page_keys[0].endswith("-a1/page-0000.json")
    assert result.text_layer_pages == [0] and result.searchable == "built"
    assert result.pdf_key == ids.work_pdf_key(sha, None, f"{run}-a2")
    first, second = _page_texts(store.get(result.pdf_key))
    assert first.split() == ["Stored"]
    assert len(second.split()) >= 20
