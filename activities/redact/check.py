"""The leak check a redacted view must pass before it is stored or released.

Painting can fail quietly (a box off by a line, a word the plan missed, a
library that leaves glyphs behind), so the finished file is searched as an
attacker would: its text layer re-extracted, its pages rendered and read again
by the real OCR engine, its raw bytes, every decompressed stream and string,
and its metadata (its PDF names left out: ``/Page`` is the writer's syntax, not
a surname). A removed string found anywhere fails the check. The report
says *where* (``text-layer:p1``, ``ocr:p2``, ``bytes``, ``stream``,
``metadata``), never *what*: the strings are document content.

The file is read once (:func:`read_surfaces`, the OCR being the costly part)
and then searched for any set of strings (:func:`find`): the plan's own, and,
in the benchmark, the ground truth the plan was never told.

The file checked is the one this process just built, never a submitter's
bytes, so pdfium and pikepdf open it here rather than in the sandboxed child.
"""

from __future__ import annotations

import binascii
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pikepdf
import pypdfium2 as pdfium

from activities.engines.base import OcrEngine
from activities.pages.raster import PDFIUM_LOCK, GrayPage, render_pdf_page
from activities.pages.textlayer import any_layer
from activities.redact.plan import normal
from custody.models import PageText


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


@dataclass(frozen=True)
class Surfaces:
    """Everything of a view an attacker could read text from."""

    pdf: bytes
    layers: tuple[str, ...]  # each page's re-extracted text layer
    ocr: tuple[str, ...]  # each rendered page as the engine reads it again
    #: Every object as PDF syntax plus its decompressed stream (images but their pixels).
    bodies: tuple[bytes, ...]
    metadata: str
    engine: str
    engine_version: str
    #: The same two readings as words with boxes: what the detectors re-run on
    #: (``activities.redact.scan``).
    layer_pages: tuple[PageText, ...] = ()
    ocr_pages: tuple[PageText, ...] = ()


def check_view(pdf: bytes, secrets: Iterable[str], engine: OcrEngine, dpi: int) -> CheckReport:
    return report(read_surfaces(pdf, engine, dpi), secrets)


def report(surfaces: Surfaces, secrets: Iterable[str]) -> CheckReport:
    strings = list(secrets)
    return CheckReport(
        len(surfaces.layers),
        len({normal(s) for s in strings} - {""}),
        surfaces.engine,
        surfaces.engine_version,
        find(surfaces, strings),
    )


def read_surfaces(pdf: bytes, engine: OcrEngine, dpi: int) -> Surfaces:
    layers, ocr = [], []
    for index, layer, image in view_pages(pdf, dpi):
        layers.append(layer)
        ocr.append(engine.recognise(image, index))
    bodies, metadata = _structure(pdf)
    return Surfaces(
        pdf,
        tuple(layer.text for layer in layers),
        tuple(page.text for page in ocr),
        bodies,
        metadata,
        engine.name,
        engine.version,
        tuple(layers),
        tuple(ocr),
    )


def find(
    surfaces: Surfaces, strings: Iterable[str], *, at_word_edge: bool = False
) -> tuple[str, ...]:
    """Where any of ``strings`` is found in ``surfaces``: text by its letters and digits
    (case and spacing ignored), bytes as a PDF may encode the string.

    ``at_word_edge`` (the benchmark's reading of "readable") counts a hit in a page's
    text only where it begins or ends at a word's edge: "Berg" is not read in "October
    GE", which joined is "octobergE". The check itself keeps the stricter search: a
    refusal is the safe side."""
    raw = [s for s in strings if normal(s)]
    wanted = sorted({normal(s) for s in raw})
    needles = _needles(raw)
    seen = _at_edge if at_word_edge else (lambda text, wanted: _found(normal(text), wanted))
    leaks = []
    for index, (layer, ocr) in enumerate(zip(surfaces.layers, surfaces.ocr, strict=True)):
        if seen(layer, wanted):
            leaks.append(f"text-layer:p{index + 1}")
        if seen(ocr, wanted):
            leaks.append(f"ocr:p{index + 1}")
    if any(needle in _unnamed(surfaces.pdf) for needle in needles):
        leaks.append("bytes")
    for body in map(_unnamed, surfaces.bodies):
        if any(n in body for n in needles) or _found(normal(body.decode("latin-1")), wanted):
            leaks.append("stream")
    if _found(normal(surfaces.metadata), wanted):
        leaks.append("metadata")
    return tuple(dict.fromkeys(leaks))


#: A PDF name: ``/Page``, ``/Width``, ``/FlateDecode``.
_NAME = re.compile(rb"/[A-Za-z][A-Za-z0-9.#+_-]*")


def _unnamed(data: bytes) -> bytes:
    """``data`` without its PDF names: syntax the view's writer chose, never a document's
    content, so a removed word that spells one (a surname "Page") is searched for in the
    view's strings, text and streams, not in ``/Type /Page``."""
    return _NAME.sub(b"/", data)


def _found(haystack: str, wanted: list[str]) -> bool:
    return any(needle in haystack for needle in wanted)


def _at_edge(text: str, wanted: list[str]) -> bool:
    """Whether a needle stands in ``text`` joined, starting or ending where a word does."""
    words = [w for w in map(normal, text.split()) if w]
    joined, edges, at = "".join(words), {0}, 0
    for word in words:
        at += len(word)
        edges.add(at)
    for needle in wanted:
        start = joined.find(needle)
        while start >= 0:
            if start in edges or start + len(needle) in edges:
                return True
            start = joined.find(needle, start + 1)
    return False


def view_pages(pdf: bytes, dpi: int) -> Iterator[tuple[int, PageText, GrayPage]]:
    """Each page of a view this process built: its index, text layer and image at ``dpi``."""
    with PDFIUM_LOCK:
        doc = pdfium.PdfDocument(pdf)
        count = len(doc)
    try:
        for index in range(count):
            with PDFIUM_LOCK:
                page = doc[index]
                layer = any_layer(page, index, dpi)
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


def _structure(pdf: bytes) -> tuple[tuple[bytes, ...], str]:
    """Every object as PDF syntax (its strings, nested or not), every decompressed stream
    but images (their pixels are what OCR reads), and the metadata as text."""
    bodies = []
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        for obj in doc.objects:
            stream = isinstance(obj, pikepdf.Stream)
            body = obj.stream_dict.unparse() if stream else obj.unparse()
            if stream and obj.get("/Subtype") != pikepdf.Name.Image:
                body += obj.read_bytes()
            bodies.append(body)
        info = " ".join(str(v) for v in doc.docinfo.values()) if "/Info" in doc.trailer else ""
        xmp = doc.Root.Metadata.read_bytes().decode("latin-1") if "/Metadata" in doc.Root else ""
    return tuple(bodies), info + xmp
