"""Recognising a released copy by its printed mark alone, as ``custody egress identify`` does.

A print-out that was scanned back has lost the PDF's ``/ID`` and XMP; what
survives is the top band :mod:`activities.egress.render` burns into every page:
the release id in large monospace and a five-character check code. Tesseract
reads the band; the check code then decides, among the id as read and its
lookalike variants (0/O, 1/l/I, 7//, ...), which one was printed, so a single
misread glyph is corrected and a reading the code does not confirm is dropped.

Parses bytes from outside (pdfium, Pillow, Tesseract) in-process: run it where
untrusted input is allowed to be parsed.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Collection, Generator, Iterator
from contextlib import closing

import pypdfium2 as pdfium
import pytesseract
from PIL import Image

from activities.egress.pdfmeta import CHECK_ALPHABET, check_code
from activities.pages.raster import PDFIUM_LOCK, render_pdf_page, to_gray

_READ_DPI = 300
_READ_MAX_PX = 3000
_CHECK_READS = str.maketrans("OIL", "011")
# Glyphs Tesseract confuses (shapes, then case in a monospace font); the check
# code picks the reading that was printed.
_LOOKALIKES = "0Oo 1lIi| 7/ 5Ss 2Zz 8B 6Gé Cc Kk Pp Uu Vv Ww Xx Aa Dd Ee Ff"
# In the five-character check code (Crockford base32, upper case): glyphs read for
# one another there; a code may differ from the printed one in one such place.
_CODE_LOOKALIKES = "5S 6GE 8B 0DQ 2Z"
_CODE_ALTERNATIVES = {ch: group for group in _CODE_LOOKALIKES.split(" ") for ch in group}
_ALTERNATIVES = {ch: group for group in _LOOKALIKES.split(" ") for ch in group}
_MAX_READINGS = 256
_CHECK_SET = frozenset(CHECK_ALPHABET)
_EDGE_PUNCTUATION = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")
_PAGE_SUFFIX = re.compile(r"[^A-Za-z0-9]*page\s*\d+\W*$", re.IGNORECASE)
_RELEASE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# psm 4: one column of lines of varying size, as the bands are laid out.
_ANY = "--psm 4"
_HEX_ONLY = f"--psm 4 -c tessedit_char_whitelist=0123456789abcdef{CHECK_ALPHABET}"


def read_visible_mark(data: bytes, candidates: Collection[str] = ()) -> str | None:
    """The release id printed on page 1 of a released PDF or a scan of it, else None.

    Reads the top band, then the bottom one, with Tesseract; a reading counts
    when the check code printed beside it confirms it, or, given ``candidates``
    (the release ids the store holds), when the printed id is within
    ``MAX_ID_EDITS`` character edits of exactly one of them: Custody's ids are
    random 128-bit hex, about 30 edits apart, so a few OCR slips cannot turn
    one into another. Bytes that are no PDF, PNG, JPEG or TIFF give None too.
    """
    page = first_page(data)
    return None if page is None else read_mark_on_page(page, candidates)


def read_mark_on_page(page: Image.Image, candidates: Collection[str] = ()) -> str | None:
    """``read_visible_mark`` on a page already decoded (by the sandboxed inspection child)."""
    width, height = page.size
    top, bottom = (0, 0, width, height * 18 // 100), (0, height * 88 // 100, width, height)
    # Custody's own ids are lower-case hex: read first with only hex digits and the
    # check alphabet allowed (no ¢ for c, no stray h), then unconstrained, for any
    # id the pattern allows; low-resolution scans read better at twice the size.
    # The bottom line ends "<id> <code> · page N": read unconstrained, its words
    # keep the code apart from the page number that the hex-only pass glues on.
    passes = (
        (top, 1, _HEX_ONLY),
        (top, 1, _ANY),
        (top, 2, _ANY),
        (bottom, 1, _ANY),
        (bottom, 1, _HEX_ONLY),
    )
    for box, scale, config in passes:
        band = page.crop(box)
        if scale != 1:
            band = band.resize((band.width * scale, band.height * scale), Image.Resampling.LANCZOS)
        text = pytesseract.image_to_string(band, "eng", config, timeout=60)
        found = find_release_id(text) or _nearest(text, candidates)
        if found is not None:
            return found
    return None


MAX_ID_EDITS = 4
_NEAREST_MIN_LENGTH = 24
_GRAM = 4


def _nearest(text: str, candidates: Collection[str]) -> str | None:
    """The one candidate a printed line spells within ``MAX_ID_EDITS`` edits, if exactly one.

    The id may stand anywhere in the line: beside its check code in the large
    monospace row, or at the end of the mark's sentence ("... release <id>") in
    the smaller sans row, which Tesseract often reads right where it slips on
    the monospace (a bold ``f`` read as ``T``, ``F`` or ``#``, or doubled).
    """
    # Only ids long enough that four slips cannot make one from another, or from
    # any stretch of printed text (Custody's are 32 hex characters).
    wanted = [(c, c.lower()) for c in candidates if len(c) >= _NEAREST_MIN_LENGTH]
    for line in text.splitlines():
        token = "".join(line.split()).lower()
        if len(token) < _NEAREST_MIN_LENGTH - MAX_ID_EDITS:
            continue
        grams = {token[i : i + _GRAM] for i in range(len(token) - _GRAM + 1)}
        near = {
            c
            for c, low in wanted
            if _may_be_within(low, grams) and _edits_within(low, token) <= MAX_ID_EDITS
        }
        if len(near) == 1:
            return near.pop()
    return None


def _may_be_within(pattern: str, grams: set[str]) -> bool:
    """The q-gram lemma: a string within k edits of part of a line shares at least
    m - q + 1 - k q of its m - q + 1 q-grams with the line; most candidates fail this
    cheap count, and only the rest are aligned."""
    need = len(pattern) - _GRAM + 1 - MAX_ID_EDITS * _GRAM
    if need <= 0:
        return True
    return sum(pattern[i : i + _GRAM] in grams for i in range(len(pattern) - _GRAM + 1)) >= need


def _edits_within(pattern: str, line: str) -> int:
    """Fewest edits turning ``pattern`` into some substring of ``line`` (Sellers' semi-global
    Levenshtein), stopping once every path is past ``MAX_ID_EDITS``."""
    bound = MAX_ID_EDITS
    row = [0] * (len(line) + 1)  # the match may start anywhere in the line
    for i, cp in enumerate(pattern, 1):
        prev, row[0] = row[0], i
        for j, cl in enumerate(line, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (cp != cl))
        if min(row) > bound:
            return bound + 1
    return min(row)


def find_release_id(text: str) -> str | None:
    """The first release id in OCR text that is followed by its own check code."""
    for first, second in _pairs(text):
        code = second.upper().translate(_CHECK_READS)
        if len(code) != 5 or not set(code) <= _CHECK_SET:
            continue
        codes = _code_readings(code)
        for reading in itertools.islice(_readings(first), _MAX_READINGS):
            if _RELEASE_ID.fullmatch(reading) and check_code(reading) in codes:
                return reading
    return None


def _code_readings(code: str) -> frozenset[str]:
    """The code as read, and each reading with one lookalike swapped (25 bits less ~4)."""
    found = {code}
    for i, ch in enumerate(code):
        for other in _CODE_ALTERNATIVES.get(ch, ""):
            found.add(code[:i] + other + code[i + 1 :])
    return frozenset(found)


def _pairs(text: str) -> Iterator[tuple[str, str]]:
    # (id, code) candidates: neighbouring words; a line ending in the code with
    # the id before it in up to four pieces where Tesseract saw gaps (the bottom
    # line, "... release <id> <code> · page N", once its page number is cut);
    # one line holding both, with any spaces Tesseract put inside the id; an id
    # wrapped over up to three lines above a line holding the code alone.
    yield from itertools.pairwise(_words(text))
    for row in (_words(_PAGE_SUFFIX.sub("", line)) for line in text.splitlines()):
        for pieces in range(1, min(len(row) - 1, 4) + 1):
            yield "".join(row[-1 - pieces : -1]), row[-1]
    lines = ["".join(line.split()) for line in text.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        yield line[:-5], line[-5:]
        for above in range(1, min(index, 3) + 1):
            yield "".join(lines[index - above : index]), line


def _words(text: str) -> list[str]:
    return [w for w in (_EDGE_PUNCTUATION.sub("", w) for w in text.split()) if w]


def _readings(token: str) -> Iterator[str]:
    # The token as read first, then with one lookalike swapped, then two, ...
    spots = [i for i, ch in enumerate(token) if ch in _ALTERNATIVES]
    for n in range(len(spots) + 1):
        for chosen in itertools.combinations(spots, n):
            others = [_ALTERNATIVES[token[i]].replace(token[i], "") for i in chosen]
            for swaps in itertools.product(*others):
                chars = list(token)
                for i, ch in zip(chosen, swaps, strict=True):
                    chars[i] = ch
                yield "".join(chars)


def read_every_page(data: bytes, candidates: Collection[str] = ()) -> list[str | None]:
    """The release id printed on each page of a released PDF (one entry for an image)."""
    return [read_mark_on_page(page, candidates) for page in _pages(data)]


def first_page(data: bytes) -> Image.Image | None:
    with closing(_pages(data)) as pages:
        return next(pages, None)


def _pages(data: bytes) -> Generator[Image.Image]:
    # Nothing is yielded while pdfium's lock is held: the caller reads each page
    # with Tesseract in between.
    try:
        if not data.startswith(b"%PDF-"):
            with Image.open(io.BytesIO(data), formats=["PNG", "JPEG", "TIFF"]) as image:
                page = Image.fromarray(to_gray(image))
            yield page
            return
        with PDFIUM_LOCK:
            pdf = pdfium.PdfDocument(data)
        try:
            for index in itertools.count():
                with PDFIUM_LOCK:
                    if index >= len(pdf):
                        return
                    points = max(pdf.get_page_size(index))
                    dpi = min(_READ_DPI, int(_READ_MAX_PX * 72 / points))
                    page = Image.fromarray(render_pdf_page(pdf, index, dpi))
                yield page
        finally:
            with PDFIUM_LOCK:
                pdf.close()
    except (pdfium.PdfiumError, OSError, ValueError, IndexError):
        return
