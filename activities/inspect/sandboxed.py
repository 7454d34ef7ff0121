"""Page images for OCR, decoded in the sandboxed child: ``iter_pages`` behind the boundary.

``iter_pages_sandboxed`` keeps ``activities.pages.raster.iter_pages``'s contract
(lazy ``(index, HxW uint8)`` pages from ``start``) but never decodes a byte in
this process: a forked, locked-down child (``activities.inspect.render``)
renders each page and sends its raw bitmap over a pipe. This side trusts
nothing it is sent: a page larger than the policy allows, or out of order,
ends the document as CORRUPT, and each page has the decode deadline.

``iter_layers_sandboxed`` does the same for a PDF whose born-digital pages are
read from their text layer (``activities.pages.textlayer``): the child parses
the layer and sends its words and boxes as JSON, checked here as ``PageText``;
pages without one come as bitmaps. pdfium never opens the document here.

``originals_sandboxed`` asks the child what each PDF page's own scan was
(``activities.egress.original``), so a release keeps a page's resolution.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import cast

import numpy as np
from pydantic import TypeAdapter, ValidationError

from activities.egress.original import Original
from activities.inspect import untrusted
from activities.inspect.child import Child
from activities.inspect.inspection import ChildOrder, MediaType
from activities.inspect.render import END, FRAME, MAX_LAYER_BYTES, page_budget
from activities.pages.raster import PDF, GrayPage
from custody.errors import Code, DocumentRejected
from custody.models import PageText
from custody.settings import Limits

Page = GrayPage | PageText
_ORIGINALS = TypeAdapter(list[Original])

_MEDIA_TYPES: frozenset[str] = frozenset(
    {"application/pdf", "image/png", "image/jpeg", "image/tiff"}
)
_MAX_TAIL = 64 * 1024  # the verdict line after the pages


def iter_pages_sandboxed(
    path: Path, media_type: str, dpi: int, start: int = 0, limits: Limits | None = None
) -> Iterator[tuple[int, GrayPage]]:
    """Yield ``(page_index, HxW uint8 array)`` from page ``start`` on, rendered in the child."""
    if start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    if media_type not in _MEDIA_TYPES:
        raise ValueError(f"no page reader for media type {media_type!r}")
    return _images(_pages(path, _order("render", media_type, dpi, start, limits or Limits())))


def _images(pages: Generator[tuple[int, Page]]) -> Iterator[tuple[int, GrayPage]]:
    with contextlib.closing(pages):  # closing this closes the child's stream at once
        for index, page in pages:
            if isinstance(page, PageText):  # never asked for: a lying child
                raise DocumentRejected(Code.CORRUPT, "renderer sent a text layer")
            yield index, page


def iter_layers_sandboxed(
    path: Path, dpi: int, start: int = 0, limits: Limits | None = None
) -> Iterator[tuple[int, PageText | None, GrayPage | None]]:
    """``(index, layer, None)`` for a PDF's born-digital pages, ``(index, None, image)`` for
    the rest at ``dpi``: both from the child, one page in memory at a time."""
    if start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    return _split(_pages(path, _order("layers", PDF, dpi, start, limits or Limits())))


def _split(
    pages: Generator[tuple[int, Page]],
) -> Iterator[tuple[int, PageText | None, GrayPage | None]]:
    with contextlib.closing(pages):
        for index, page in pages:
            yield (index, page, None) if isinstance(page, PageText) else (index, None, page)


def originals_sandboxed(
    path: Path, media_type: str, limits: Limits | None = None
) -> list[Original]:
    """Each PDF page's :class:`Original`, read in the child; empty for an image source."""
    if media_type != PDF:
        return []
    reply: dict[str, object] = {}
    for _ in _pages(path, _order("originals", PDF, 200, 0, limits or Limits()), reply):
        raise DocumentRejected(Code.CORRUPT, "renderer sent a page for originals")
    try:
        return _ORIGINALS.validate_python(reply.get("originals"))
    except ValidationError:
        raise DocumentRejected(Code.CORRUPT, "renderer sent malformed originals") from None


def _order(kind: str, media_type: str, dpi: int, start: int, limits: Limits) -> ChildOrder:
    media = cast(MediaType, media_type)  # checked against _MEDIA_TYPES
    return ChildOrder.model_validate(
        {"kind": kind, "limits": limits, "media_type": media, "dpi": dpi, "start": start}
    )


def _pages(
    document: Path | bytes,
    order: ChildOrder,
    reply: dict[str, object] | None = None,
    zygote: untrusted._Zygote | None = None,
) -> Generator[tuple[int, Page]]:
    """The child's pages, in order; its verdict, once they end, into ``reply``.

    ``zygote``: another than the worker's (one that preloaded other decoders).
    """
    limits = order.limits
    budget = page_budget(limits.max_page_pixels, limits.ocr_dpi, order.dpi)
    kill = zygote.kill if zygote else untrusted._kill
    child = zygote.fork(document) if zygote else untrusted._fork(cast(Path, document))
    settled = False
    try:
        child.send(order.model_dump_json().encode())
        expected = order.start
        while (page := _next_page(child, limits.decode_timeout_s, budget)) is not None:
            index, image = page
            if index < expected:
                raise DocumentRejected(Code.CORRUPT, "renderer sent pages out of order")
            expected = index + 1
            yield index, image
        verdict = _settle(child, limits.decode_timeout_s)
        settled = True
        if reply is not None:
            reply.update(verdict)
    finally:
        if not settled:  # abandoned, past a deadline, or lied: the child goes
            kill(child.pid)
        child.close()


def _next_page(child: Child, timeout_s: float, budget: int) -> tuple[int, Page] | None:
    """The next page, or None once the child has ended its pages (or just ended)."""
    header = _read(child, FRAME.size, timeout_s)
    if len(header) < FRAME.size:
        return None
    index, width, height = FRAME.unpack(header)
    if index == END:
        return None
    if index >= 0 and width == 0:
        return _layer(child, index, height, timeout_s)
    if index < 0 or width * height > budget or width * height == 0:
        raise DocumentRejected(Code.CORRUPT, f"renderer sent a {width}x{height} page")
    pixels = _read(child, width * height, timeout_s)
    if len(pixels) < width * height:
        return None  # it died mid-page: its exit status says why
    return index, np.frombuffer(pixels, dtype=np.uint8).reshape(height, width).copy()


def _layer(child: Child, index: int, size: int, timeout_s: float) -> tuple[int, Page] | None:
    if size > MAX_LAYER_BYTES:
        raise DocumentRejected(Code.CORRUPT, f"renderer sent a {size}-byte text layer")
    body = _read(child, size, timeout_s)
    if len(body) < size:
        return None  # it died mid-page: its exit status says why
    try:
        layer = PageText.model_validate_json(body)
    except ValidationError:
        raise DocumentRejected(Code.CORRUPT, "renderer sent a malformed text layer") from None
    if layer.page != index:
        raise DocumentRejected(Code.CORRUPT, "renderer sent a text layer out of place")
    return index, layer


def _read(child: Child, size: int, timeout_s: float) -> bytes:
    found = child.read(size, timeout_s)
    if found is None:
        raise DocumentRejected(Code.DECODE_LIMIT, f"page render exceeded {timeout_s:g} s")
    return found


def _settle(child: Child, timeout_s: float) -> dict[str, object]:
    """The child's verdict; raise what its end says: a rejection, crash, limit, or fault."""
    tail = _read(child, _MAX_TAIL, timeout_s)
    reply = untrusted.child_reply(os.waitstatus_to_exitcode(child.status()), tail)
    if reply.get("ok") in (None, False):
        raise RuntimeError(f"page renderer failed ({str(reply.get('error'))[:80]})")
    return reply
