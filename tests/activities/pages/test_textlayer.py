"""Born-digital PDF pages are read from their text layer; scans, hidden layer or not, are not.

The layer is parsed in the locked-down inspection child: these tests go through
``iter_layers_sandboxed``, and one proves this process never opens the document
with pdfium while doing so.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as raw
import pytest

from activities.inspect.sandboxed import iter_layers_sandboxed
from activities.pages.searchable import searchable_pdf
from activities.pages.textlayer import layer_sha256
from custody.errors import DocumentRejected
from custody.models import PageText, Word

DPI = 200


def text_layer_page(path: Path) -> PageText | None:
    """The first page's text layer, checking that exactly one of layer and image comes back."""
    index, layer, image = next(iter(iter_layers_sandboxed(path, DPI)))
    assert index == 0 and (layer is None) != (image is None)
    return layer


def _born_digital(path: Path, lines: list[str]) -> None:
    """A letter page with typeset text, as a word processor would write it."""
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(612, 792)
    for n, line in enumerate(lines):
        obj = raw.FPDFPageObj_NewTextObj(pdf.raw, b"Helvetica", ctypes.c_float(12))
        encoded = (line + "\x00").encode("utf-16-le")
        raw.FPDFText_SetText(
            obj, ctypes.cast(ctypes.c_char_p(encoded), ctypes.POINTER(raw.FPDF_WCHAR))
        )
        raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 72, 700 - 20 * n)
        raw.FPDFPage_InsertObject(page.raw, obj)
    page.gen_content()
    page.close()
    pdf.save(str(path))
    pdf.close()


def test_text_layer_page_reads_typeset_text_with_word_boxes(tmp_path: Path) -> None:
    """Each line comes back in order; word boxes sit where the words were set, in page pixels."""
    path = tmp_path / "letter.pdf"
    _born_digital(path, ["Discharge summary for ward 7", "Follow up in 2 weeks"])
    page = text_layer_page(path)
    assert page is not None
    assert page.text == "Discharge summary for ward 7\nFollow up in 2 weeks"
    assert [w.text for w in page.words][:3] == ["Discharge", "summary", "for"]
    assert (page.width, page.height) == (round(612 * DPI / 72), round(792 * DPI / 72))
    first = page.words[0].box
    scale = DPI / 72
    assert abs(first[0][0] - 72 * scale) < 3 * scale  # left edge at the 1-inch margin
    assert abs(first[2][1] - (792 - 700) * scale) < 4 * scale  # bottom on the baseline
    assert page.mean_confidence == 1.0
    assert layer_sha256(page) == layer_sha256(page.model_copy())


def test_text_layer_page_refuses_scans_even_with_a_hidden_layer(tmp_path: Path) -> None:
    """A page-sized image means a scan: its hidden OCR layer is not trusted, OCR runs again."""
    image = np.full((400, 600), 255, dtype=np.uint8)
    word = Word(text="Hidden", confidence=0.9, box=[[10, 10], [90, 10], [90, 40], [10, 40]])
    text = PageText(
        page=0, width=600, height=400, text="Hidden", words=[word], mean_confidence=0.9, seconds=1.0
    )
    path = tmp_path / "scan.pdf"
    path.write_bytes(searchable_pdf([(image, text)], dpi=DPI))
    assert pdfium.PdfDocument(path)[0].get_textpage().get_text_range().strip() == "Hidden"
    assert text_layer_page(path) is None


def test_text_layer_page_is_none_for_an_empty_page(tmp_path: Path) -> None:
    """No text at all: OCR decides (it will find nothing, and say so with its own code)."""
    pdf = pdfium.PdfDocument.new()
    pdf.new_page(612, 792).close()
    path = tmp_path / "blank.pdf"
    pdf.save(str(path))
    pdf.close()
    assert text_layer_page(path) is None


def test_text_layer_page_is_parsed_in_the_child_never_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With pdfium's open made to fail in this process, every page still comes back right."""
    path = tmp_path / "letter.pdf"
    _born_digital(path, ["Referral received", "Clinic 4"])
    untrusted = path.read_bytes()
    real = pdfium.PdfDocument

    def refuse(source: Any, *args: Any, **kwargs: Any) -> pdfium.PdfDocument:
        # A stand-in to prove a negative: opening the untrusted document here fails.
        if source in (path, str(path), untrusted) or hasattr(source, "read"):
            raise AssertionError("pdfium opened the untrusted document in the worker")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pdfium, "PdfDocument", refuse)
    page = text_layer_page(path)
    assert page is not None and page.text == "Referral received\nClinic 4"
    assert [w.text for w in page.words] == ["Referral", "received", "Clinic", "4"]


@pytest.mark.parametrize(
    ("name", "codes"),
    [("bomb_ocrmypdf_hugemono.pdf", {"PIXEL_LIMIT"}), ("elf_renamed.pdf", {"CORRUPT"})],
)
def test_text_layer_hostile_pdf_gets_its_code_from_the_child(
    corpus: Path, name: str, codes: set[str]
) -> None:
    """A hostile file from the research corpus is refused by the child with a stable code."""
    with pytest.raises(DocumentRejected) as err:
        list(iter_layers_sandboxed(corpus / "bad_inputs" / name, DPI))
    assert err.value.code.value in codes
