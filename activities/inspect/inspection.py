"""Inspect an untrusted document on disk before any OCR is spent.

Meant to run inside a child process (``activities.inspect.zygote`` forks one per
document, under time and memory limits), so a decoder that hangs, balloons or
crashes costs a child, never a worker. The rules
run cheapest first: size from ``stat``, type from the magic bytes, then the
format's own checks (``activities.inspect.pdfcheck`` for PDF, Pillow here for images).

The file's name and extension are never consulted. A PDF must start with
``%PDF-`` at offset 0: viewers accept it anywhere in the first 1024 bytes, and
that leniency is exactly what executable/PDF polyglots rely on.

Rejections carry a stable code and a detail made of sizes, limits and type
names only; never document content, never a decoder's own message.
"""

from __future__ import annotations

import codecs
import io
import struct
import warnings
from pathlib import Path
from typing import Literal

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from custody.errors import Code, DocumentRejected
from custody.limits import PolicyLimits as Limits

MediaType = Literal["application/pdf", "image/png", "image/jpeg", "image/tiff"]

_MAGIC: tuple[tuple[bytes, MediaType], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"II+\x00", "image/tiff"),  # BigTIFF
    (b"MM\x00+", "image/tiff"),
)
# Only to name what was refused in the detail; anything unlisted is "unknown".
_REFUSED: tuple[tuple[bytes, str], ...] = (
    (b"\x7fELF", "elf"),
    (b"MZ", "pe"),
    (b"PK\x03\x04", "zip"),
    (b"GIF8", "gif"),
    (b"BM", "bmp"),
    (b"RIFF", "riff"),
)
_PILLOW_FORMAT: dict[str, str] = {"image/png": "PNG", "image/jpeg": "JPEG", "image/tiff": "TIFF"}
# What Pillow raises on malformed input, beyond its own UnidentifiedImageError
# (an OSError): truncation is OSError, a bad TIFF IFD ValueError, a bad PNG chunk
# SyntaxError, short header reads struct.error, odd tag types TypeError.
_PILLOW_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    ValueError,
    SyntaxError,
    EOFError,
    struct.error,
    IndexError,
    KeyError,
    TypeError,
    ZeroDivisionError,
)


class Inspection(BaseModel):
    """What validation learned about an accepted document: type, size, no content."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    media_type: MediaType
    pages: int = Field(ge=1)
    max_page_pixels: int = Field(ge=1)  # the largest page as rasterised for OCR
    notes: list[str] = Field(default_factory=list)  # machine codes, e.g. "pdf_repaired"


def inspect_path(path: Path, limits: Limits) -> Inspection:
    """Apply every intake rule to ``path``; raise ``DocumentRejected`` on the first broken one."""
    check_size(path, limits)
    return inspect_data(path.read_bytes(), limits)


def inspect_data(data: bytes, limits: Limits) -> Inspection:
    """Apply every intake rule to a document's bytes (how the sandboxed child sees it)."""
    check_length(len(data), limits)
    media_type = sniff_head(data[:8])
    if media_type != "application/pdf":
        return _inspect_image(io.BytesIO(data), media_type, limits)
    # Imported here: a process that only sniffs (the worker, before it forks
    # a child) need not load pdfium; the child preloads it (``_preload``).
    from activities.inspect.pdfcheck import inspect_pdf

    pdf = inspect_pdf(data, limits)
    return Inspection(
        media_type=media_type, pages=pdf.pages, max_page_pixels=pdf.max_page_pixels, notes=pdf.notes
    )


def check_size(path: Path, limits: Limits) -> int:
    """The file's size in bytes, after the EMPTY and TOO_LARGE rules."""
    return check_length(path.stat().st_size, limits)


def check_length(size: int, limits: Limits) -> int:
    """``size`` itself, after the EMPTY and TOO_LARGE rules."""
    if size == 0:
        raise DocumentRejected(Code.EMPTY, "0 bytes")
    if size > limits.max_bytes:
        raise DocumentRejected(Code.TOO_LARGE, f"{size} bytes > {limits.max_bytes}")
    return size


def sniff(path: Path) -> MediaType:
    """The media type its first bytes declare; anything else is UNSUPPORTED_TYPE."""
    with path.open("rb") as handle:
        return sniff_head(handle.read(8))


def sniff_head(head: bytes) -> MediaType:
    """The media type these first bytes declare; anything else is UNSUPPORTED_TYPE."""
    for magic, media_type in _MAGIC:
        if head.startswith(magic):
            return media_type
    seen = next((name for magic, name in _REFUSED if head.startswith(magic)), "unknown")
    raise DocumentRejected(Code.UNSUPPORTED_TYPE, f"magic bytes: {seen}")


def _inspect_image(source: io.BytesIO, media_type: MediaType, limits: Limits) -> Inspection:
    previous = Image.MAX_IMAGE_PIXELS
    # Pillow then refuses at open() anything over twice the limit, before any
    # allocation; between one and two times it only warns, and we check below.
    Image.MAX_IMAGE_PIXELS = limits.max_page_pixels
    try:
        with warnings.catch_warnings():
            # Pillow warns about damage it can read past (odd EXIF, stray tags) and
            # about pixel counts we check ourselves; only its errors decide.
            warnings.simplefilter("ignore")
            with Image.open(source, formats=[_PILLOW_FORMAT[media_type]]) as image:
                sizes = _frame_sizes(image, media_type, limits)
                notes = ["extra_frames_ignored"] if _ignores_frames(image, media_type) else []
                _decode(image, len(sizes))
    except Image.DecompressionBombError as exc:
        raise DocumentRejected(Code.PIXEL_LIMIT, f"declared > {limits.max_page_pixels} px") from exc
    except _PILLOW_ERRORS as exc:
        raise DocumentRejected(Code.CORRUPT, f"{type(exc).__name__} decoding image") from exc
    finally:
        Image.MAX_IMAGE_PIXELS = previous
    return Inspection(
        media_type=media_type, pages=len(sizes), max_page_pixels=max(sizes), notes=notes
    )


def _frame_sizes(image: Image.Image, media_type: MediaType, limits: Limits) -> list[int]:
    """Each page's declared pixels, from the headers alone: nothing decoded yet."""
    # A TIFF's frames are its pages; other formats are one page (frame 0), as OCR reads them.
    frames = limits.max_pages + 1 if media_type == "image/tiff" else 1
    sizes: list[int] = []
    for index in range(frames):
        try:
            image.seek(index)
        except EOFError:
            break
        sizes.append(_declared_pixels(image, limits))
    if len(sizes) > limits.max_pages:
        raise DocumentRejected(Code.PAGE_LIMIT, f"more than {limits.max_pages} pages")
    return sizes


def _declared_pixels(image: Image.Image, limits: Limits) -> int:
    width, height = image.size
    if width < 1 or height < 1:
        raise DocumentRejected(Code.CORRUPT, "image has no pixels")
    if width * height > limits.max_page_pixels:
        raise DocumentRejected(
            Code.PIXEL_LIMIT, f"image {width * height} px > {limits.max_page_pixels}"
        )
    return width * height


def _ignores_frames(image: Image.Image, media_type: MediaType) -> bool:
    return media_type != "image/tiff" and bool(getattr(image, "is_animated", False))


def _decode(image: Image.Image, frames: int) -> None:
    """Decode every page in full: truncation and corruption surface only here."""
    for index in range(frames):
        image.seek(index)
        image.load()


class ChildOrder(BaseModel):
    """What the parent writes to a waiting child: what to do, under which limits.

        The document itself arrives as an open descriptor beside the order, never a
        path: the child reads it before it is locked down and needs no filesystem.
        ``render`` sends page bitmaps (``activities.inspect.render``), ``layers``
        text layers where a PDF page has one and bitmaps elsewhere, ``identify`` a
        file's release marks (``activities.inspect.identify``), ``originals``
    each PDF page's own scan resolution (``activities.egress.original``); ``probe``
        is a test-only order, honoured only by a zygote started with
        ``CUSTODY_INSPECT_PROBE=1`` (``activities.inspect.probe``); ``lockdown``
        decodes nothing and answers which layers this platform refused (the
        workers' start-up check, ``activities.inspect.untrusted.check_sandbox``).
    """

    kind: Literal["inspect", "render", "layers", "identify", "probe", "lockdown", "originals"] = (
        "inspect"
    )
    limits: Limits
    media_type: MediaType = "application/pdf"  # render: the type validation found
    dpi: int = Field(default=200, ge=1, le=1200)  # render: PDF pages at this resolution
    start: int = Field(default=0, ge=0)  # render: the first page to send
    anchor_pem: str = ""  # identify: the C2PA CA a manifest must chain to (public)
    probe_paths: list[str] = Field(default_factory=list)
    probe_threads: bool = False  # probe: locked down as for ``identify`` (threads allowed)
    probe_port: int = 0
    probe_skip: list[Literal["root", "seccomp", "landlock"]] = Field(default_factory=list)


def _preload() -> None:
    """Do every import a verdict needs while waiting for work, not while a document waits."""
    import activities.inspect.pdfcheck  # noqa: F401  (pdfium and the raw PDF reader)

    # pdfium hands text back as UTF-16: a locked-down child cannot import a codec.
    for codec in ("utf-16-le", "utf-16-be", "utf-16", "latin-1", "ascii"):
        codecs.lookup(codec)

    Image.init()  # Pillow's format plugins, otherwise loaded on the first open


def _verdict(data: bytes, limits: Limits) -> dict[str, object]:
    try:
        return {"ok": inspect_data(data, limits).model_dump()}
    except DocumentRejected as exc:
        return {"code": exc.code.value, "detail": exc.detail}
    except MemoryError:
        return {"code": Code.DECODE_LIMIT.value, "detail": "memory limit"}
    except Exception as exc:
        # Not a verdict but a bug or an environment fault: the parent retries.
        # Only the type name crosses over; its message could quote the document.
        return {"error": type(exc).__name__}
