"""Page images for OCR, decoded in the sandboxed child: ``iter_pages`` behind the boundary.

``iter_pages_sandboxed`` keeps ``activities.pages.raster.iter_pages``'s contract
(lazy ``(index, HxW uint8)`` pages from ``start``) but never decodes a byte in
this process: a forked, locked-down child (``activities.inspect.render``)
renders each page and sends its raw bitmap over a pipe. This side trusts
nothing it is sent: a page larger than the policy allows, or out of order,
ends the document as CORRUPT, and each page has the decode deadline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np

from activities.inspect import untrusted
from activities.inspect.child import Child
from activities.inspect.inspection import ChildOrder, MediaType
from activities.inspect.render import END, FRAME, page_budget
from activities.pages.raster import GrayPage
from custody.errors import Code, DocumentRejected
from custody.settings import Limits

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
    return _pages(path, _order(media_type, dpi, start, limits or Limits()))


def _order(media_type: str, dpi: int, start: int, limits: Limits) -> ChildOrder:
    kind = cast(MediaType, media_type)  # checked against _MEDIA_TYPES
    return ChildOrder(kind="render", limits=limits, media_type=kind, dpi=dpi, start=start)


def _pages(path: Path, order: ChildOrder) -> Iterator[tuple[int, GrayPage]]:
    limits = order.limits
    budget = page_budget(limits.max_page_pixels, limits.ocr_dpi, order.dpi)
    child = untrusted._fork(path)
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
        _settle(child, limits.decode_timeout_s)
        settled = True
    finally:
        if not settled:  # abandoned, past a deadline, or lied: the child goes
            untrusted._kill(child.pid)
        child.close()


def _next_page(child: Child, timeout_s: float, budget: int) -> tuple[int, GrayPage] | None:
    """The next page, or None once the child has ended its pages (or just ended)."""
    header = _read(child, FRAME.size, timeout_s)
    if len(header) < FRAME.size:
        return None
    index, width, height = FRAME.unpack(header)
    if index == END:
        return None
    if index < 0 or width * height > budget or width * height == 0:
        raise DocumentRejected(Code.CORRUPT, f"renderer sent a {width}x{height} page")
    pixels = _read(child, width * height, timeout_s)
    if len(pixels) < width * height:
        return None  # it died mid-page: its exit status says why
    return index, np.frombuffer(pixels, dtype=np.uint8).reshape(height, width).copy()


def _read(child: Child, size: int, timeout_s: float) -> bytes:
    found = child.read(size, timeout_s)
    if found is None:
        raise DocumentRejected(Code.DECODE_LIMIT, f"page render exceeded {timeout_s:g} s")
    return found


def _settle(child: Child, timeout_s: float) -> None:
    """Raise what the child's end says: a rejection, a crash, a limit, or a transient fault."""
    tail = _read(child, _MAX_TAIL, timeout_s)
    reply = untrusted.child_reply(os.waitstatus_to_exitcode(child.status()), tail)
    if reply.get("ok") is not True:
        raise RuntimeError(f"page renderer failed ({str(reply.get('error'))[:80]})")
