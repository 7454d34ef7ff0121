"""The leak check a redacted view must pass before it is stored or released.

Painting can fail quietly (a box off by a line, a word the plan missed, a
library that leaves glyphs behind), so the finished file is searched as an
attacker would: its text layer re-extracted, its pages rendered and read again
by the real OCR engine and by a second engine of another family (a line one
engine never detects, a dotted-leader "DOB" on a fax, is seldom missed by
both), its raw bytes, every decompressed stream and string,
and its metadata (its PDF names left out: ``/Page`` is the writer's syntax, not
a surname). A removed string found anywhere fails the check. The report
says *where* (``text-layer:p1``, ``ocr:p2``, ``ocr2:p2`` (the second engine), ``bytes``, ``stream``,
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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import pikepdf
import pypdfium2 as pdfium

from activities.engines.base import OcrEngine
from activities.pages.raster import PDFIUM_LOCK, GrayPage, render_pdf_page
from activities.pages.textlayer import any_layer
from activities.redact.plan import Region, normal
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
    #: Each page as the second engine reads it, when the check has one (``second``),
    #: where the first reading has no word and nothing was painted.
    second_ocr: tuple[str, ...] = ()
    second_pages: tuple[PageText, ...] = ()
    #: Each image stream's bytes as the file holds them (compressed pixels).
    pixels: tuple[bytes, ...] = ()


def _engine_label(engine: OcrEngine, second: OcrEngine | None) -> tuple[str, str]:
    """The check's engines as one name and one version: ``rapidocr+tesseract``."""
    if second is None:
        return engine.name, engine.version
    return f"{engine.name}+{second.name}", f"{engine.version}+{second.version}"


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


def read_surfaces(
    pdf: bytes,
    engine: OcrEngine,
    dpi: int,
    second: OcrEngine | None = None,
    painted: Sequence[Region] = (),
) -> Surfaces:
    """The view read once: ``engine`` on every rendered page, and ``second`` too if given,
    where neither ``engine`` nor the text layer read a word and nothing was ``painted``."""
    layers, ocr, again = [], [], []
    for index, layer, image in view_pages(pdf, dpi):
        layers.append(layer)
        ocr.append(engine.recognise(image, index))
        if second is not None:
            read = (*_boxes(layer), *_boxes(ocr[-1]), *(r.box for r in painted if r.page == index))
            again.append(_beyond(second.recognise(image, index), read))
    bodies, metadata, pixels = _structure(pdf)
    name, version = _engine_label(engine, second)
    return Surfaces(
        pdf,
        tuple(layer.text for layer in layers),
        tuple(page.text for page in ocr),
        bodies,
        metadata,
        name,
        version,
        tuple(layers),
        tuple(ocr),
        tuple(page.text for page in again),
        tuple(again),
        pixels,
    )


#: Of a second reader's word, the share of its box under words the first reading has,
#: or under the view's paint, past which the second reading of it is left out. The
#: second reader is there for what the first never detected: on seed 10 of the
#: redaction bench, the date of a fax's dotted-leader line, which it read where
#: PP-OCRv6 had no word at all (overlap 0.00), at confidence 0.32. Where the first
#: engine did read, Tesseract's sparse mode mostly re-reads worse ("Stady.", "Octobe",
#: "6ss", overlap 0.56-1.00), and on paint it reads the black as letters ("ES [ED",
#: "TTT"); a check sweeping those paints them again round after round and refuses
#: clean views (6 of 60 on seed 10, at 0.0-0.73 confidence: no floor separates them).
_ALREADY_READ = 0.5


def _boxes(page: PageText) -> list[tuple[int, int, int, int]]:
    return [_box(w.box) for w in page.words]


def _box(quad: list[list[int]]) -> tuple[int, int, int, int]:
    xs, ys = [x for x, _ in quad], [y for _, y in quad]
    return min(xs), min(ys), max(xs), max(ys)


def _beyond(page: PageText, boxes: Sequence[tuple[int, int, int, int]]) -> PageText:
    """``page`` without the words that lie mostly inside ``boxes``."""
    words = [w for w in page.words if _covered(_box(w.box), boxes) < _ALREADY_READ]
    return page.model_copy(update={"words": words, "text": " ".join(w.text for w in words)})


def _covered(box: tuple[int, int, int, int], boxes: Sequence[tuple[int, int, int, int]]) -> float:
    """The share of ``box`` inside ``boxes`` (their overlaps counted once each, capped)."""
    x0, y0, x1, y1 = box
    area = max(1, (x1 - x0) * (y1 - y0))
    inside = 0
    for bx0, by0, bx1, by1 in boxes:
        inside += max(0, min(x1, bx1) - max(x0, bx0)) * max(0, min(y1, by1) - max(y0, by0))
    return min(1.0, inside / area)


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
    for index, text in enumerate(surfaces.second_ocr):
        if seen(text, wanted):
            leaks.append(f"ocr2:p{index + 1}")
    if any(needle in _unnamed(_outside_images(surfaces)) for needle in needles):
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


def _structure(pdf: bytes) -> tuple[tuple[bytes, ...], str, tuple[bytes, ...]]:
    """Every object as PDF syntax (its strings, nested or not), every decompressed stream
    but images (their pixels are what OCR reads), the metadata as text, and each image's
    stream as the file holds it (left out of the search of the raw bytes)."""
    bodies, pixels = [], []
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        for obj in doc.objects:
            stream = isinstance(obj, pikepdf.Stream)
            body = obj.stream_dict.unparse() if stream else obj.unparse()
            if stream and obj.get("/Subtype") != pikepdf.Name.Image:
                body += obj.read_bytes()
            elif stream:
                pixels.append(obj.read_raw_bytes())
            bodies.append(body)
        info = " ".join(str(v) for v in doc.docinfo.values()) if "/Info" in doc.trailer else ""
        xmp = doc.Root.Metadata.read_bytes().decode("latin-1") if "/Metadata" in doc.Root else ""
    return tuple(bodies), info + xmp, tuple(pixels)


def _outside_images(surfaces: Surfaces) -> bytes:
    """The view's bytes without its images' compressed pixels: there a removed "YYYY" (a
    date format's hint) turned up by chance, in no text anyone could read (redaction bench
    seed 8, a clean view refused); the pixels are searched by both OCR readings."""
    data = surfaces.pdf
    for payload in surfaces.pixels:
        if len(payload) >= _MIN_PIXELS:
            data = data.replace(payload, b"")
    return data


#: Shorter image streams stay in the search: cutting a few bytes could cut syntax too.
_MIN_PIXELS = 64
