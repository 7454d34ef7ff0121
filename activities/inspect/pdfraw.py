"""A bounded read of a PDF's raw bytes, for what pdfium's API does not show.

pdfium is forgiving by design: it trusts ``/Count``, silently skips a page-tree
cycle, rebuilds a broken xref and exposes no catalog dictionary, so it cannot
tell us about ``/OpenAction`` JavaScript or ``/NeedsRendering``. This module
reads object bodies straight from the bytes (and from Flate object streams,
where PDF 1.5 writers put most dictionaries) and reports what it finds.

Findings are one-sided: a positive finding (a name, a revisited page node, a
huge image) rejects; an object it cannot find only makes the page walk
inconclusive, and pdfium stays the authority on structure.

Names are matched with ``#xx`` escapes decoded, because every viewer reads
``/J#61vaScript`` as ``/JavaScript``. Short names count only where a value of
the right kind follows (``/JS (``, ``/AA <<``), so the bytes of a compressed
image do not match by chance. Strings are not skipped: a literal
"/JavaScript" in an uncompressed string also rejects. That false alarm is
cheaper than a tokenizer that crafted input could throw out of step.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Literal

_DELIM = rb"\x00\s()<>\[\]{}/%"
_END = rb"(?![^" + _DELIM + rb"])"  # the name stops here: whitespace, a delimiter or EOF
_WS = rb"(?:[\x00\s]|%[^\r\n]*)*"  # PDF whitespace and comments
_REF = rb"(\d{1,10})[\x00\s]+\d{1,5}[\x00\s]+R"
# Object streams are small in real files; more than this is a decompression bomb.
OBJSTM_BUDGET = 32 * 1024 * 1024


def _name(name: str) -> bytes:
    """A pattern for ``/name`` in which any byte may be written as ``#xx``."""
    parts = []
    for byte in name.encode():
        hexed = b"".join(b"[%c%c]" % (c, ord(chr(c).upper())) for c in b"%02x" % byte)
        parts.append(b"(?:%s|#%s)" % (re.escape(bytes([byte])), hexed))
    return b"/" + b"".join(parts) + _END


def _key(name: str, value: bytes) -> re.Pattern[bytes]:
    return re.compile(_name(name) + _WS + value)


_ACTIVE: dict[str, re.Pattern[bytes]] = {
    "JavaScript": re.compile(_name("JavaScript")),
    "JS": _key("JS", rb"(?:[(<]|" + _REF + rb")"),
    "AA": _key("AA", rb"(?:<<|" + _REF + rb")"),
    "Launch": re.compile(_name("Launch")),
}
_NEEDS_RENDERING = _key("NeedsRendering", rb"true")
_XFA = _key("XFA", rb"(?:[\[<(]|" + _REF + rb")")
_OBJ = re.compile(rb"(?<!\d)(\d{1,10})[\x00\s]+\d{1,5}[\x00\s]+obj" + _END)
_STREAM = re.compile(rb"(?<!end)stream(?:\r\n|\n|\r)")
_OBJSTM = re.compile(_name("ObjStm"))
_FILTER_KEY = re.compile(_name("Filter"))
_FILTER = _key("Filter", rb"(\[[^\]]*\]|/[^" + _DELIM + rb"]*)")
_PARMS = re.compile(_name("DecodeParms") + b"|" + _name("DP"))
_COUNT_N = _key("N", rb"(\d{1,9})")
_FIRST = _key("First", rb"(\d{1,12})")
_ROOT = _key("Root", _REF)
_PAGES = _key("Pages", _REF)
_KIDS = _key("Kids", rb"(?:\[([^\]]*)\]|" + _REF + rb")")
_LEAF = re.compile(_name("Type") + _WS + _name("Page"))
_IMAGE = re.compile(_name("Subtype") + _WS + _name("Image"))
_WIDTH = _key("Width", rb"(\d{1,12})([\x00\s]+\d{1,5}[\x00\s]+R)?")
_HEIGHT = _key("Height", rb"(\d{1,12})([\x00\s]+\d{1,5}[\x00\s]+R)?")
_REFS = re.compile(_REF)
_NUMBER = re.compile(rb"[\x00\s]*(\d{1,12})")

Walk = Literal["ok", "revisit", "oversized", "incomplete", "absent"]


@dataclass(frozen=True)
class RawFindings:
    active: frozenset[str]  # names of active content found, e.g. {"JS", "AA"}
    needs_rendering: bool
    xfa: bool
    opaque_streams: int  # object streams we could not read, so could not scan
    largest_image: int  # pixels of the largest image XObject dictionary
    walk: Walk  # how the raw page-tree walk ended
    leaf_pages: int  # pages the walk found; meaningful only when walk == "ok"


@dataclass
class _Table:
    dicts: dict[int, bytes] = field(default_factory=dict)  # last definition wins
    streams: list[bytes] = field(default_factory=list)  # decoded object streams
    opaque: int = 0
    budget: int = OBJSTM_BUDGET


def read_pdf(data: bytes, max_nodes: int) -> RawFindings:
    """Scan ``data`` for active content, XFA, image sizes and the page tree's shape."""
    table = _read_objects(data)
    texts = [data, *table.streams]
    walk, leaves = _walk(table.dicts, _last_ref(_ROOT, data), max_nodes)
    return RawFindings(
        active=frozenset(n for n, p in _ACTIVE.items() if any(p.search(t) for t in texts)),
        needs_rendering=any(_NEEDS_RENDERING.search(t) for t in texts),
        xfa=any(_XFA.search(t) for t in texts),
        opaque_streams=table.opaque,
        largest_image=max((_image_pixels(table.dicts, t) for t in table.dicts.values()), default=0),
        walk=walk,
        leaf_pages=leaves,
    )


def _read_objects(data: bytes) -> _Table:
    """Every ``N G obj`` body in file order, so an incremental update overrides."""
    table = _Table()
    heads = list(_OBJ.finditer(data))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(data)
        stream = _STREAM.search(data, head.end(), end)
        if stream is None:
            stop = data.find(b"endobj", head.end(), end)
            table.dicts[int(head[1])] = data[head.end() : stop if stop >= 0 else end]
            continue
        text = data[head.end() : stream.start()]
        table.dicts[int(head[1])] = text
        if _OBJSTM.search(text):
            stop = data.rfind(b"endstream", stream.end(), end)
            _unpack(table, text, data[stream.end() : stop if stop >= 0 else end])
    return table


def _unpack(table: _Table, text: bytes, raw: bytes) -> None:
    decoded = _decode(text, raw, table.budget)
    if decoded is None:
        table.opaque += 1
        return
    table.budget -= len(decoded)
    table.streams.append(decoded)
    first, count = _int(_FIRST, text), _int(_COUNT_N, text)
    numbers = [int(n) for n in re.findall(rb"\d{1,12}", decoded[:first])]
    pairs = list(zip(numbers[0::2], numbers[1::2], strict=False))[:count]
    offsets = [first + offset for _, offset in pairs] + [len(decoded)]
    for i, (number, _) in enumerate(pairs):
        table.dicts[number] = decoded[offsets[i] : offsets[i + 1]]


def _decode(text: bytes, raw: bytes, budget: int) -> bytes | None:
    """The object stream's bytes, or None when only a filter we do not run could read it."""
    if not _FILTER_KEY.search(text):
        return raw
    found = _FILTER.search(text)
    if found is None:
        return None  # e.g. an indirect /Filter: not worth resolving for a hostile file
    filters = [_unescape(n) for n in re.findall(rb"/([^" + _DELIM + rb"]*)", found[1])]
    if filters not in ([b"FlateDecode"], [b"Fl"]) or _PARMS.search(text):
        return None
    inflater = zlib.decompressobj()
    try:
        decoded = inflater.decompress(raw, max(budget, 0) + 1)
    except zlib.error:
        return None
    return decoded if len(decoded) <= budget else None


def _walk(dicts: dict[int, bytes], root: int | None, max_nodes: int) -> tuple[Walk, int]:
    """Walk the page tree from the catalog, refusing to visit any node twice."""
    pages = _PAGES.search(dicts.get(root, b"")) if root is not None else None
    if pages is None:
        return "absent", 0
    stack, seen, leaves, complete = [int(pages[1])], set(), 0, True
    while stack:
        number = stack.pop()
        if number in seen:
            return "revisit", leaves
        seen.add(number)
        if len(seen) > max_nodes:
            return "oversized", leaves
        text = dicts.get(number)
        if text is None:
            complete = False  # pdfium may still find it through a repaired xref
            continue
        kids = _kids(dicts, text)
        if kids is None:
            leaves += 1
        else:
            stack.extend(kids)
    return ("ok" if complete else "incomplete"), leaves


def _kids(dicts: dict[int, bytes], text: bytes) -> list[int] | None:
    """A page-tree node's kids, or None for a leaf (a page)."""
    if _LEAF.search(text):
        return None
    found = _KIDS.search(text)
    if found is None:
        return None
    array = found[1] if found[1] is not None else dicts.get(int(found[2]), b"")
    return [int(ref[1]) for ref in _REFS.finditer(array)]


def _image_pixels(dicts: dict[int, bytes], text: bytes) -> int:
    if not _IMAGE.search(text):
        return 0
    return _dimension(dicts, _WIDTH, text) * _dimension(dicts, _HEIGHT, text)


def _dimension(dicts: dict[int, bytes], key: re.Pattern[bytes], text: bytes) -> int:
    found = key.search(text)
    if found is None:
        return 0
    if found[2] is None:
        return int(found[1])
    target = _NUMBER.match(dicts.get(int(found[1]), b""))  # an indirect /Width 12 0 R
    return int(target[1]) if target else 0


def _last_ref(pattern: re.Pattern[bytes], data: bytes) -> int | None:
    """The object number in the last match: the newest trailer of an updated file."""
    last = None
    for match in pattern.finditer(data):
        last = match
    return int(last[1]) if last else None


def _int(pattern: re.Pattern[bytes], text: bytes) -> int:
    found = pattern.search(text)
    return int(found[1]) if found else 0


def _unescape(name: bytes) -> bytes:
    return re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m[1], 16)]), name)
