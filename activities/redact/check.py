"""The leak check a redacted view must pass before it is stored or released.

Painting can fail quietly (a box off by a line, a word the plan missed, a
library that leaves glyphs behind), so the finished file is searched as an
attacker would: its text layer re-extracted, its pages rendered and read again
by the real OCR engine, its raw bytes, every decompressed stream and string,
and its metadata. A removed string found anywhere fails the check. The report
says *where* (``text-layer:p1``, ``ocr:p2``, ``bytes``, ``stream``,
``metadata``), never *what*: the strings are document content.

The file checked is the one this process just built, never a submitter's
bytes, so pdfium and pikepdf open it here rather than in the sandboxed child.
"""

from __future__ import annotations

import binascii
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pikepdf
import pypdfium2 as pdfium

from activities.engines.base import OcrEngine
from activities.pages.raster import PDFIUM_LOCK, GrayPage, render_pdf_page
from activities.redact.plan import normal


@dataclass(frozen=True)
class CheckReport:
    pages: int
    strings: int
    engine: str
    engine_version: str
    #: Where a removed string was found; empty when the view is clean.
    leaks: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not self.leaks


def check_view(pdf: bytes, secrets: Iterable[str], engine: OcrEngine, dpi: int) -> CheckReport:
    wanted = sorted({normal(s) for s in secrets} - {""})
    leaks: list[str] = []
    pages = 0
    for index, layer, image in _pages(pdf, dpi):
        pages += 1
        if _found(normal(layer), wanted):
            leaks.append(f"text-layer:p{index + 1}")
        if _found(normal(engine.recognise(image, index).text), wanted):
            leaks.append(f"ocr:p{index + 1}")
    raw = [s for s in secrets if normal(s)]
    if any(needle in pdf for needle in _needles(raw)):
        leaks.append("bytes")
    leaks += _structure(pdf, wanted, raw)
    return CheckReport(pages, len(wanted), engine.name, engine.version, tuple(dict.fromkeys(leaks)))


def _found(haystack: str, wanted: list[str]) -> bool:
    return any(needle in haystack for needle in wanted)


def _pages(pdf: bytes, dpi: int) -> Iterator[tuple[int, str, GrayPage]]:
    with PDFIUM_LOCK:
        doc = pdfium.PdfDocument(pdf)
        count = len(doc)
    try:
        for index in range(count):
            with PDFIUM_LOCK:
                page = doc[index]
                textpage = page.get_textpage()
                layer = textpage.get_text_range()
                textpage.close()
                page.close()
                image = render_pdf_page(doc, index, dpi)
            yield index, layer, image
    finally:
        with PDFIUM_LOCK:
            doc.close()


def _needles(strings: list[str]) -> set[bytes]:
    """Each string as a PDF may hold it: UTF-8, UTF-16 either way, hex of either."""
    needles: set[bytes] = set()
    for text in strings:
        for encoded in (text.encode(), text.encode("utf-16-be"), text.encode("utf-16-le")):
            hexed = binascii.hexlify(encoded)
            needles |= {encoded, hexed, hexed.upper()}
    return needles


def _structure(pdf: bytes, wanted: list[str], raw: list[str]) -> list[str]:
    """Every object as PDF syntax (its strings, nested or not), every decompressed stream
    but images (their pixels are what OCR reads), and the metadata."""
    leaks = []
    needles = _needles(raw)
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        for obj in doc.objects:
            body = (
                obj.unparse() if not isinstance(obj, pikepdf.Stream) else obj.stream_dict.unparse()
            )
            if isinstance(obj, pikepdf.Stream) and obj.get("/Subtype") != pikepdf.Name.Image:
                body += obj.read_bytes()
            if any(n in body for n in needles) or _found(normal(body.decode("latin-1")), wanted):
                leaks.append("stream")
        info = " ".join(str(v) for v in doc.docinfo.values()) if "/Info" in doc.trailer else ""
        xmp = doc.Root.Metadata.read_bytes().decode("latin-1") if "/Metadata" in doc.Root else ""
        if _found(normal(info + xmp), wanted):
            leaks.append("metadata")
    return leaks
