"""``custody egress identify``'s readings of a file, decoded in the locked-down child.

A file found anywhere is as untrusted as an upload, so the three decoders
``identify`` needs meet it only in a forked child locked down like an
inspection child (``activities.inspect.zygote``): c2pa for a manifest, pikepdf
for the PDF's XMP, pdfium or Pillow for page 1. The child answers what they
found (release ids and the claim's names, as JSON) and page 1 as one gray
bitmap frame (``activities.inspect.render``); this process runs Tesseract on
those pixels, never on the file.

The worker's zygote never loads these decoders: ``read_marks`` starts its own,
with ``CUSTODY_INSPECT_EGRESS=1``, which preloads them before any child is
forked (a locked-down child can import nothing). c2pa's Rust reader builds a
thread pool (one thread: ``RAYON_NUM_THREADS``), so this child may start
threads, never processes (``activities.inspect.lockdown``, ``threads``).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from PIL import Image
from pydantic import BaseModel, ValidationError

from activities.inspect import sandboxed, untrusted
from activities.inspect.inspection import ChildOrder
from activities.inspect.render import END, FRAME
from activities.pages.raster import GrayPage
from custody.errors import Code, DocumentRejected, ProvenanceError
from custody.settings import Limits

EGRESS_ENV = "CUSTODY_INSPECT_EGRESS"
_ENABLED = os.environ.get(EGRESS_ENV) == "1"


class Claim(BaseModel):
    """A C2PA claim's names, and whether its signer chains to the given anchor."""

    release_id: str
    recipient: str | None
    tenant: str | None
    trusted: bool


class Marks(BaseModel):
    """What the child read: the manifest's claim, the XMP release id, nothing of the text."""

    c2pa: Claim | None = None
    xmp: str | None = None


def preload() -> None:
    """In the identify zygote: import every decoder now, while files are reachable."""
    if _ENABLED:
        import activities.egress.pdfmeta
        import activities.egress.provenance
        import activities.egress.readback  # noqa: F401  (pdfium, Pillow, c2pa, pikepdf)


def identify_marks(fd: int, data: bytes, anchor_pem: bytes) -> dict[str, object]:
    """In the child: write page 1 as a frame to ``fd``, then the end frame; the marks."""
    if not _ENABLED:
        _end(fd)
        return {"error": "IdentifyRefused"}
    from activities.egress.pdfmeta import read_identity
    from activities.egress.readback import first_page

    try:
        identity = read_identity(data) if data.startswith(b"%PDF-") else None
        xmp = identity.release_id if identity is not None else None
        marks = Marks(c2pa=_claim(data, anchor_pem), xmp=xmp)
        page = first_page(data)
        if page is not None:
            pixels = np.asarray(page.convert("L"), dtype=np.uint8)
            height, width = pixels.shape
            _write(fd, FRAME.pack(0, width, height) + pixels.tobytes())
        return {"ok": marks.model_dump(mode="json")}
    except MemoryError:
        return {"code": Code.DECODE_LIMIT.value, "detail": "memory limit"}
    except Image.DecompressionBombError:
        return {"code": Code.PIXEL_LIMIT.value, "detail": "decompression bomb"}
    except Exception as exc:  # a decoder's own failure: only its type, never its message
        return {"code": Code.CORRUPT.value, "detail": type(exc).__name__}
    finally:
        _end(fd)


def _claim(data: bytes, anchor_pem: bytes) -> Claim | None:
    from activities.egress import provenance

    try:
        reading = provenance.read_claim(data, None, anchor_pem)
    except ProvenanceError:
        return None
    if reading is None:
        return None
    claim, trusted = reading.claim, reading.trusted and bool(anchor_pem)
    return Claim(
        release_id=claim.release_id, recipient=claim.recipient, tenant=claim.tenant, trusted=trusted
    )


def _end(fd: int) -> None:
    _write(fd, FRAME.pack(END, 0, 0))


def _write(fd: int, frame: bytes) -> None:
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]


_EGRESS_ZYGOTE = untrusted._Zygote(env={EGRESS_ENV: "1", "RAYON_NUM_THREADS": "1"})


def read_marks(
    data: bytes, anchor_pem: bytes | None, limits: Limits | None = None
) -> tuple[Marks, GrayPage | None]:
    """The file's marks and page 1, read in a locked-down child; rejections keep their code."""
    limits = limits or Limits()
    if len(data) > limits.max_bytes:
        raise DocumentRejected(Code.TOO_LARGE, f"{len(data)} bytes > {limits.max_bytes}")
    order = ChildOrder(kind="identify", limits=limits, anchor_pem=(anchor_pem or b"").decode())
    reply: dict[str, object] = {}
    with contextlib.closing(sandboxed._pages(data, order, reply, _EGRESS_ZYGOTE)) as pages:
        first = next(pages, None)
        if next(pages, None) is not None:  # ends the child before it sends any more
            raise DocumentRejected(Code.CORRUPT, "identify child sent more than page 1")
    page = None if first is None else first[1]
    if page is not None and not isinstance(page, np.ndarray):
        raise DocumentRejected(Code.CORRUPT, "identify child sent a text layer")
    try:
        return Marks.model_validate(reply["ok"]), page
    except ValidationError:  # the child lied: it is as hostile as the file
        raise DocumentRejected(Code.CORRUPT, "identify child sent malformed marks") from None
